// Recycled storage for the executor's large tensors. A decode-step simulation allocates the
// same few cache-sized buffers for every variant (a full layer at ctx 4096: 2M floats, 8 MB
// each); fresh ones cost page faults and a zero fill that the executor then overwrites anyway.
// Each thread keeps up to kMaxBytes of released buffers and hands them out again.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace layoutx::model::numerics {

template <typename T>
class BufferPool {
 public:
  static constexpr size_t kMinElements = size_t(1) << 14;  // smaller ones: plain allocation
  static constexpr size_t kMaxBytes = size_t(128) << 20;   // kept per thread and element type

  // A vector of exactly n elements with unspecified values (the caller overwrites them): kept
  // storage of the smallest capacity that holds n (and not over 2n, to leave larger buffers for
  // larger tensors), resized within its capacity (only elements past its old size, if any, are
  // initialized), else a new vector.
  static std::vector<T> take(size_t n) {
    if (n >= kMinElements) {
      State& s = state();
      size_t best = s.kept.size();
      for (size_t i = 0; i < s.kept.size(); ++i) {
        const size_t c = s.kept[i].capacity();
        if (c >= n && c <= 2 * n && (best == s.kept.size() || c < s.kept[best].capacity())) best = i;
      }
      if (best < s.kept.size()) {
        std::vector<T> v = std::move(s.kept[best]);
        s.kept.erase(s.kept.begin() + static_cast<std::ptrdiff_t>(best));
        s.bytes -= v.capacity() * sizeof(T);
        v.resize(n);
        return v;
      }
    }
    return std::vector<T>(n);
  }

  // Keeps v's storage for a later take; small buffers, and any beyond the budget, are freed.
  static void give(std::vector<T> v) {
    State& s = state();
    const size_t bytes = v.capacity() * sizeof(T);
    if (v.capacity() < kMinElements || s.bytes + bytes > kMaxBytes) return;  // freed with v
    s.bytes += bytes;
    s.kept.push_back(std::move(v));
  }

  // Bytes held by this thread's pool (for tests).
  static size_t bytes_kept() { return state().bytes; }

 private:
  struct State {
    std::vector<std::vector<T>> kept;
    size_t bytes = 0;
  };
  static State& state() {
    thread_local State s;
    return s;
  }
};

}  // namespace layoutx::model::numerics
