// Tensor: a dense row-major buffer with a shape, the value type of the reference executor.
#pragma once
#include <cstdint>
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

// Row-major strides of a shape (elements).
inline std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

}  // namespace layoutx::model::numerics
