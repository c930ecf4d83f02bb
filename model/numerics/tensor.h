// Tensor: a dense row-major buffer with a shape, the value type of the reference executor.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "model/graph.h"

namespace layoutx::model::numerics {

template <typename T>
struct Tensor {
  Shape shape;
  std::vector<T> data;  // row-major, numel(shape) elements

  Tensor() = default;
  explicit Tensor(Shape s, T fill = T(0)) : shape(std::move(s)), data(static_cast<size_t>(numel(shape)), fill) {}
  Tensor(Shape s, std::vector<T> d) : shape(std::move(s)), data(std::move(d)) {}

  int64_t size() const { return static_cast<int64_t>(data.size()); }
  T& operator[](int64_t i) { return data[static_cast<size_t>(i)]; }
  const T& operator[](int64_t i) const { return data[static_cast<size_t>(i)]; }

  // Same elements converted to another scalar type.
  template <typename U>
  Tensor<U> cast() const {
    return Tensor<U>(shape, std::vector<U>(data.begin(), data.end()));
  }
};

// Elements per block of the per-element passes that skip blocks of zeros (all_zero).
inline constexpr size_t kZeroBlock = 256;

// True if x[0..n) are all ±0 (a NaN is not zero). Ors the bit patterns, which vectorizes.
template <typename T>
bool all_zero(const T* x, size_t n) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  Bits bits = 0;
  for (size_t i = 0; i < n; ++i) bits |= std::bit_cast<Bits>(x[i]);
  return (bits << 1) == 0;  // every bit but the sign's
}

// Row-major strides of a shape (elements).
inline std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

}  // namespace layoutx::model::numerics
