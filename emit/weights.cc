#include "emit/weights.h"

#include <cmath>

#include "support/error.h"

namespace layoutx::emit {

uint64_t NormalStream::bits() {
  // splitmix64 (Steele, Lea, Flood 2014): a full-period 64-bit generator.
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double NormalStream::uniform() { return (static_cast<double>(bits() >> 11) + 0.5) * 0x1.0p-53; }

double NormalStream::next() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = uniform(), u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double a = 2.0 * M_PI * u2;
  spare_ = r * std::sin(a);
  has_spare_ = true;
  return r * std::cos(a);
}

uint64_t stream_seed(uint64_t seed, uint64_t tag) {
  // splitmix64's finalizer over seed and tag: nearby (seed, tag) pairs give unrelated streams.
  uint64_t z = seed ^ ((tag + 1) * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<float> SeededWeights::tensor(model::Role role, const model::Shape& shape) const {
  using model::Role;
  const int64_t n = model::numel(shape);
  NormalStream rng(stream_seed(seed_, static_cast<uint64_t>(role)));
  std::vector<float> w(static_cast<size_t>(n));
  switch (role) {
    case Role::kInputNorm:
    case Role::kPostNorm:
      for (auto& x : w) x = static_cast<float>(1.0 + 0.05 * rng.next());
      return w;
    case Role::kQkv:
    case Role::kHeadGate:
    case Role::kOutProj:
    case Role::kMlpGate:
    case Role::kMlpUp:
    case Role::kMlpDown: {
      if (shape.size() != 2) throw Error(std::string("weights: ") + model::role_name(role) + " must be 2-D, got " + model::to_string(shape));
      const double sd = 1.0 / std::sqrt(static_cast<double>(shape[0]));
      for (auto& x : w) x = static_cast<float>(sd * rng.next());
      return w;
    }
    case Role::kNone:
    case Role::kHiddenIn:
    case Role::kKCache:
    case Role::kVCache:
    case Role::kMask:
    case Role::kRopeCos:
    case Role::kRopeSin:
    case Role::kHiddenOut:
    case Role::kKOut:
    case Role::kVOut:
      break;
  }
  throw Error(std::string("weights: role '") + model::role_name(role) + "' is not a weight");
}

}  // namespace layoutx::emit
