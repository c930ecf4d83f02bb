// IEEE 754 binary16 (float16): conversion to and from its 16-bit pattern, and the round trip
// that simulates storing a value as f16 (round to nearest even; overflow to infinity;
// subnormals kept; NaN stays NaN).
#pragma once
#include <cstdint>

namespace layoutx::model::numerics {

uint16_t float_to_half_bits(float x);
float half_bits_to_float(uint16_t h);
// x rounded to the nearest float16 value (computed from the double, so a double input is
// rounded once, not first to float).
double round_to_half(double x);

}  // namespace layoutx::model::numerics
