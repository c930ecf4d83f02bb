// IEEE 754 binary16 (float16): conversion to and from its 16-bit pattern, and the round trip
// that simulates storing a value as f16 (round to nearest even; overflow to infinity;
// subnormals kept; NaN stays NaN).
#pragma once
#include <cstddef>
#include <cstdint>

namespace layoutx::model::numerics {

uint16_t float_to_half_bits(float x);
float half_bits_to_float(uint16_t h);
// x rounded to the nearest float16 value (computed from the double, so a double input is
// rounded once, not first to float).
double round_to_half(double x);

// dst[i] = round_to_half(src[i]) for i < n (src == dst allowed). float elements round in
// float bit arithmetic, which gives exactly round_to_half(double(x)) (float -> double is exact,
// and every float16 value is a float); the executor's f16 simulation, over whole tensors.
void round_to_half(const float* src, float* dst, size_t n);
void round_to_half(const double* src, double* dst, size_t n);
// True if every x[i] is a float16 value already (NaN and infinities included): round_to_half
// would return each unchanged. Reads x once at most.
bool is_half_exact(const float* x, size_t n);
bool is_half_exact(const double* x, size_t n);

}  // namespace layoutx::model::numerics
