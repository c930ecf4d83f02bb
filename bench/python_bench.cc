// import layoutx and a `select` call from Python against the layoutx executable (issue 16).
// Whole processes (wall time, new process per iteration): Python's own start-up, Python
// importing layoutx, `layoutx select` (the CLI), and Python importing layoutx and calling
// layoutx.select. In process: the same select through an embedded interpreter (the module's
// call: argument list, in-process app, JSON parsed into a dict) and through run_layoutx in C++
// (the app alone). Report medians: machines are shared.
#include <benchmark/benchmark.h>
#include <pybind11/embed.h>

#include <cstdlib>
#include <sstream>

#include "bench/process_loop.h"
#include "cli/app.h"

namespace {

namespace py = pybind11;
const std::string kPython = LAYOUTX_PYTHON;
const std::vector<std::string> kSelectArgs = {"select", "--precision", "w4a16", "--ctx", "4096", "--json"};

void BM_PythonStartupProcess(benchmark::State& state) { layoutx::bench::run_process_loop(state, {kPython, "-c", "pass"}); }
BENCHMARK(BM_PythonStartupProcess)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PythonImportProcess(benchmark::State& state) {
  layoutx::bench::run_process_loop(state, {kPython, "-c", "import layoutx"});
}
BENCHMARK(BM_PythonImportProcess)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CliSelectProcess(benchmark::State& state) {
  std::vector<std::string> argv{LAYOUTX_BINARY};
  argv.insert(argv.end(), kSelectArgs.begin(), kSelectArgs.end());
  layoutx::bench::run_process_loop(state, argv);
}
BENCHMARK(BM_CliSelectProcess)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PythonSelectProcess(benchmark::State& state) {
  layoutx::bench::run_process_loop(
      state, {kPython, "-c", "import layoutx; layoutx.select(precision='w4a16', ctx=[4096])"});
}
BENCHMARK(BM_PythonSelectProcess)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PythonSelectCall(benchmark::State& state) {
  static py::scoped_interpreter interpreter;  // one interpreter for the program
  py::object select = py::module_::import("layoutx").attr("select");
  py::list ctx;
  ctx.append(4096);
  for (auto _ : state) benchmark::DoNotOptimize(select(py::arg("precision") = "w4a16", py::arg("ctx") = ctx).ptr());
}
BENCHMARK(BM_PythonSelectCall)->Unit(benchmark::kMillisecond);

void BM_CppSelectCall(benchmark::State& state) {
  for (auto _ : state) {
    std::ostringstream out, err;
    if (layoutx::cli::run_layoutx(kSelectArgs, out, err) != 0) {
      state.SkipWithError(err.str().c_str());
      break;
    }
    benchmark::DoNotOptimize(out.str().size());
  }
}
BENCHMARK(BM_CppSelectCall)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  setenv("PYTHONPATH", LAYOUTX_PYTHON_DIR, 1);  // the built package, for the child processes and the interpreter
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
