// Range checks of numeric flags, run by CLI11 on the flag's text before it is converted, so a
// value is checked in 64 bits (no wraparound into the int it is stored in) and a NaN or an
// infinity is refused. Messages read "--ctx: must be an integer in [2, 1048576], got 2147483648".
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>

namespace layoutx::cli {

// An integer (decimal, optional sign) in [lo, hi].
CLI::Validator integer_in(int64_t lo, int64_t hi);
// A finite decimal number in [lo, hi] (no hex, no blanks).
CLI::Validator number_in(double lo, double hi);

// A precision name (fp16, w8a16, w4a16), so that a wrong one is refused naming the flag
// ("--precision: ...") rather than the YAML key the name is also read from.
CLI::Validator precision_name();

// The --seed flag of the verbs that generate weights or inputs: a non-negative integer (a
// negative one would wrap around into the unsigned seed).
CLI::Option* add_seed_option(CLI::App& app, uint64_t& seed, const std::string& what);

}  // namespace layoutx::cli
