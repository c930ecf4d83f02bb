#include "model/numerics/checkpoints.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "model/builder.h"
#include "model/numerics/decode_runner.h"
#include "support/error.h"
#include "support/progress.h"

namespace layoutx::model::numerics {

std::vector<Segment> checkpoint_segments(int steps) {
  if (steps <= kDenseHistory) return {Segment{0, std::max(0, steps)}};
  std::vector<Segment> segments;
  for (int i = 1; i <= kSegments; ++i) {
    const int end = static_cast<int>((int64_t(steps) * i + kSegments - 1) / kSegments);
    segments.push_back({end - kSegmentSteps, end});
  }
  return segments;
}

std::vector<int> measured_steps(const std::vector<Segment>& segments) {
  std::vector<int> steps;
  for (const Segment& s : segments)
    for (int t = s.begin; t < s.end; ++t) steps.push_back(t);
  return steps;
}

namespace {

// Calls f(i) for i in [0, n) on up to `threads` threads (this one included), each index once.
// The first exception (Interrupted included) stops the others at their next index and is
// rethrown here.
template <typename F>
void parallel_for(int n, int threads, F f) {
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mu;
  auto work = [&] {
    for (int i; !failed && (i = next++) < n;) {
      try {
        f(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int k = 1; k < std::min(threads, n); ++k) helpers.emplace_back(work);
  work();
  for (auto& h : helpers) h.join();
  if (error) std::rethrow_exception(error);
}

int thread_count(int asked) {
  if (asked > 0) return asked;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Every token's K/V entry before `until`, as the graph writes it: the variant's graph for the
// same layer with a one-entry cache (the same ops by name, so the same calibrated encodings),
// evaluated only as far as its K/V outputs. Tokens in chunks over the threads.
template <typename T>
std::vector<KvEntry<T>> token_entries(const LayerGraph& graph, PreparedWeights<T>& weights, const Sequence& hidden_in,
                                      int until, const SimOptions& options, int threads) {
  LayerSpec one = graph.layer;
  one.cache_entries = 1;
  const LayerGraph small = build_layer_graph(one, graph.variant);
  SimOptions opt = options;
  opt.record = nullptr;
  std::vector<KvEntry<T>> entries(static_cast<size_t>(until));
  constexpr int kChunk = 64;
  parallel_for((until + kChunk - 1) / kChunk, threads, [&](int c) {
    DecodeRunner<T> runner(small, weights, opt);
    runner.executor().keep_only({Role::kKOut, Role::kVOut});
    for (int s = c * kChunk; s < std::min(until, (c + 1) * kChunk); ++s) {
      progress_tick();
      runner.run(s, hidden_in[s]);  // the one-entry cache stays empty: its slot is not read
      entries[s].k = runner.executor().output(Role::kKOut).data;
      entries[s].v = runner.executor().output(Role::kVOut).data;
    }
  });
  return entries;
}

// One segment's outputs; `entries` holds every token before the segment's first step run.
template <typename T>
Sequence run_segment(const LayerGraph& graph, PreparedWeights<T>& weights, const Sequence& hidden_in, Segment seg,
                     const std::vector<KvEntry<T>>& entries, const SimOptions& options) {
  const bool roll = graph.variant.returns() == KvReturn::kWindow;
  SimOptions opt = options;
  opt.record_from_step = seg.begin;
  for (int start : {roll ? std::max(0, seg.begin - kRollWarmup) : seg.begin, 0}) {
    DecodeRunner<T> runner(graph, weights, opt);
    if (start > 0) runner.set_cache_before(start, entries);
    Sequence out;
    bool settled = true;
    for (int t = start; t < seg.end && settled; ++t) {
      progress_tick();
      runner.run(t, hidden_in[t]);
      if (start > 0 && t == seg.begin - 1) settled = runner.rolled_entries_settled(t, start);
      if (t >= seg.begin) out.emplace_back(runner.output().data.begin(), runner.output().data.end());
      runner.keep_cache(t);
    }
    if (settled) return out;
    // The rebuilt entries still changed: this segment step by step from the start.
  }
  return {};
}

}  // namespace

template <typename T>
Sequence simulate_segments(const LayerGraph& graph, PreparedWeights<T>& weights, const Sequence& hidden_in,
                           const std::vector<Segment>& segments, const SimOptions& options, int threads) {
  const LayerSpec& L = graph.layer;
  const int steps = static_cast<int>(hidden_in.size());
  int last_begin = 0, last_end = 0;
  for (const Segment& s : segments) {
    if (s.begin < 0 || s.end > steps || s.begin > s.end)
      throw Error("simulation: segment [" + std::to_string(s.begin) + ", " + std::to_string(s.end) +
                  ") outside the history of " + std::to_string(steps) + " steps");
    last_begin = std::max(last_begin, s.begin);
    last_end = std::max(last_end, s.end);
  }
  if (L.type != LayerType::kSliding && steps > L.cache_entries + 1)
    throw Error("simulation: a full layer at ctx " + std::to_string(L.context) + " holds " +
                std::to_string(L.cache_entries + 1) + " tokens; " + std::to_string(steps) +
                " steps exceed it (raise --ctx or lower --steps)");
  // Recording widens one shared map: one thread then.
  const int n = options.record ? 1 : thread_count(threads);
  // A quantized roll encoded over each step's own ranges (not calibrated) encodes the cached
  // entries over the whole window's range, which a token's own entry does not know: one pass,
  // step by step, keeping the measured steps.
  if (graph.variant.returns() == KvReturn::kWindow && options.simulate_precision &&
      is_quantized(graph.variant.precision()) && !options.ranges) {
    const Segment all{0, last_end};
    Sequence every = run_segment(graph, weights, hidden_in, all, {}, options), out;
    for (int t : measured_steps(segments)) out.push_back(std::move(every[t]));
    return out;
  }
  std::vector<KvEntry<T>> entries;
  if (last_begin > 0) entries = token_entries(graph, weights, hidden_in, last_begin, options, n);
  std::vector<Sequence> parts(segments.size());
  parallel_for(static_cast<int>(segments.size()), n, [&](int i) {
    parts[i] = run_segment(graph, weights, hidden_in, segments[i], entries, options);
  });
  Sequence out;
  for (auto& p : parts)
    for (auto& y : p) out.push_back(std::move(y));
  return out;
}

template Sequence simulate_segments<float>(const LayerGraph&, PreparedWeights<float>&, const Sequence&,
                                           const std::vector<Segment>&, const SimOptions&, int);
template Sequence simulate_segments<double>(const LayerGraph&, PreparedWeights<double>&, const Sequence&,
                                            const std::vector<Segment>&, const SimOptions&, int);

}  // namespace layoutx::model::numerics
