// Plots through gnuplot (Debian's gnuplot-nox, png terminal). The data goes to a temporary file;
// gnuplot's errors become Error with its message.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "explorer/composition.h"

namespace layoutx::cli {

void plot_sweep(const explorer::Sweep& s, const std::string& title, const std::string& png_path);

// Runs a gnuplot script that draws one PNG, in a private scratch folder: `script` refers to the
// folder's files by the names `files` gives it (name -> contents), and is prefixed with the
// terminal line ("set terminal png " + `png_options`, e.g. "size 900,560 font ',10'") and the
// output line. The PNG then replaces `png_path` atomically; the scratch folder is removed
// whatever happens. Throws Error if gnuplot fails or the PNG cannot be written.
void plot_to_png(const std::string& png_options, const std::string& script,
                 const std::vector<std::pair<std::string, std::string>>& files, const std::string& png_path,
                 const std::string& what);

}  // namespace layoutx::cli
