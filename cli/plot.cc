#include "cli/plot.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "support/atomic_file.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::cli {

namespace fs = std::filesystem;

namespace {

// A private folder under the temporary directory (mkdtemp: unique even between concurrent
// runs), removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "layoutx-plot-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw Error(pattern + ": cannot create a scratch folder for gnuplot");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_plain(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  out.close();  // a full scratch disk shows on close
  if (!out) throw Error(p.string() + ": cannot write gnuplot's input");
}

// Runs gnuplot on `script_path`; its stderr goes to a file beside it.
void gnuplot(const fs::path& script_path, const std::string& what) {
  const std::string err_path = script_path.string() + ".err";
  std::string cmd = "gnuplot '" + script_path.string() + "' 2>'" + err_path + "'";
  int rc = std::system(cmd.c_str());
  std::string err;
  {
    std::ifstream in(err_path);
    std::getline(in, err, '\0');
  }
  if (rc != 0) throw Error(what + ": gnuplot failed (is gnuplot-nox installed? scripts/setup installs it): " + err);
}

}  // namespace

void plot_to_png(const std::string& png_options, const std::string& script,
                 const std::vector<std::pair<std::string, std::string>>& files, const std::string& png_path,
                 const std::string& what) {
  check_file_target(png_path);  // the verbs check it when the flag is parsed; again, for other callers
  ScratchDir dir;
  for (const auto& [name, text] : files) write_plain(dir.path() / name, text);
  const fs::path png = dir.path() / "plot.png";
  write_plain(dir.path() / "plot.gp", "set terminal png " + png_options + "\nset output '" + png.string() + "'\n" +
                                          "cd '" + dir.path().string() + "'\n" + script);
  gnuplot(dir.path() / "plot.gp", what);
  write_file_atomically(png_path, read_text_file(png.string()));
}

void plot_sweep(const explorer::Sweep& s, const std::string& title, const std::string& png_path) {
  std::ostringstream data;
  for (const auto& p : s.points) data << p.ctx << ' ' << p.hybrid_ms << ' ' << p.all_full_ms << '\n';
  std::string script =
      "set title \"decode step vs context: " + title + "\"\n"
      "set xlabel 'context (tokens)'\nset ylabel 'predicted ms per token'\n"
      "set logscale x 2\nset grid\nset key top left\n";
  if (s.crossover_ctx)
    script += "set arrow from " + std::to_string(*s.crossover_ctx) + ", graph 0 to " + std::to_string(*s.crossover_ctx) +
              ", graph 1 nohead dt 2 lc rgb 'gray40'\n"
              "set label 'crossover " + std::to_string(*s.crossover_ctx) + "' at " + std::to_string(*s.crossover_ctx) +
              ", graph 0.9 offset 1,0\n";
  script += "plot 'sweep.dat' using 1:2 with linespoints lw 2 title 'hybrid (sliding + full layers)', "
            "'sweep.dat' using 1:3 with linespoints lw 2 title 'all layers full attention'\n";
  plot_to_png("size 900,560 font ',10'", script, {{"sweep.dat", data.str()}}, png_path, "--plot " + png_path);
}

}  // namespace layoutx::cli
