// Plots through gnuplot (Debian's gnuplot-nox, png terminal). The data goes to a temporary file;
// gnuplot's errors become Error with its message.
#pragma once
#include <string>

#include "explorer/composition.h"

namespace layoutx::cli {

void plot_sweep(const explorer::Sweep& s, const std::string& title, const std::string& png_path);

// Runs a gnuplot script; throws Error if gnuplot is missing or fails.
void run_gnuplot(const std::string& script, const std::string& what);

}  // namespace layoutx::cli
