#include "cli/plot.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "support/error.h"

namespace layoutx::cli {

void run_gnuplot(const std::string& script, const std::string& what) {
  auto dir = std::filesystem::temp_directory_path();
  auto path = dir / ("layoutx-plot-" + std::to_string(::getpid()) + ".gp");
  {
    std::ofstream out(path);
    out << script;
  }
  std::string cmd = "gnuplot " + path.string() + " 2>" + path.string() + ".err";
  int rc = std::system(cmd.c_str());
  std::string err;
  {
    std::ifstream in(path.string() + ".err");
    std::getline(in, err, '\0');
  }
  std::filesystem::remove(path);
  std::filesystem::remove(path.string() + ".err");
  if (rc != 0) throw Error(what + ": gnuplot failed (is gnuplot-nox installed? scripts/setup installs it): " + err);
}

void plot_sweep(const explorer::Sweep& s, const std::string& title, const std::string& png_path) {
  auto data = std::filesystem::temp_directory_path() / ("layoutx-sweep-" + std::to_string(::getpid()) + ".dat");
  {
    std::ofstream out(data);
    for (const auto& p : s.points) out << p.ctx << ' ' << p.hybrid_ms << ' ' << p.all_full_ms << '\n';
  }
  std::string script =
      "set terminal png size 900,560 font ',10'\n"
      "set output '" + png_path + "'\n"
      "set title \"decode step vs context: " + title + "\"\n"
      "set xlabel 'context (tokens)'\nset ylabel 'predicted ms per token'\n"
      "set logscale x 2\nset grid\nset key top left\n";
  if (s.crossover_ctx)
    script += "set arrow from " + std::to_string(*s.crossover_ctx) + ", graph 0 to " + std::to_string(*s.crossover_ctx) +
              ", graph 1 nohead dt 2 lc rgb 'gray40'\n"
              "set label 'crossover " + std::to_string(*s.crossover_ctx) + "' at " + std::to_string(*s.crossover_ctx) +
              ", graph 0.9 offset 1,0\n";
  script += "plot '" + data.string() + "' using 1:2 with linespoints lw 2 title 'hybrid (sliding + full layers)', '" +
            data.string() + "' using 1:3 with linespoints lw 2 title 'all layers full attention'\n";
  try {
    run_gnuplot(script, "--plot " + png_path);
  } catch (...) {
    std::filesystem::remove(data);
    throw;
  }
  std::filesystem::remove(data);
}

}  // namespace layoutx::cli
