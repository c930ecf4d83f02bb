// layoutx._layoutx: the CLI app run in process, for the Python package (python/layoutx/).
// No logic of its own: run() is `layoutx ARGS...` with its output captured; verbs() describes
// the app's subcommands and flags as CLI11 holds them, so the Python functions, their
// docstrings and the type stubs are generated from the one definition of each verb.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>

#include "cli/app.h"
#include "emit/ort_runner.h"
#include "support/progress.h"

namespace py = pybind11;

namespace {

// While a call runs: progress lines go to sys.stderr at once (not with the captured stderr at the
// end), and Ctrl-C stops a long computation (the fidelity check) at its next tick: the call
// then raises KeyboardInterrupt.
class PythonProgress {
 public:
  PythonProgress()
      : previous_(layoutx::set_progress_hooks(
            {.line = [](const std::string& line) { py::module_::import("sys").attr("stderr").attr("write")(line + "\n"); },
             .tick = [] {
               if (PyErr_CheckSignals() != 0) throw layoutx::Interrupted();
             }})) {}
  ~PythonProgress() { layoutx::set_progress_hooks(std::move(previous_)); }

 private:
  layoutx::ProgressHooks previous_;
};

// (exit status, standard output, standard error) of `layoutx ARGS...`.
py::tuple run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int status;
  {
    PythonProgress progress;
    status = layoutx::cli::run_layoutx(args, out, err);
  }
  if (status == layoutx::kInterruptedStatus && PyErr_Occurred()) throw py::error_already_set();
  return py::make_tuple(status, py::bytes(out.str()).attr("decode")("utf-8"),
                        py::bytes(err.str()).attr("decode")("utf-8"));
}

// One dict per verb: name, description, help (what `layoutx VERB --help` prints) and options
// [{name (long flag without dashes, or the positional's name), positional, flag, multiple,
//   required, type (CLI11's type name), default (as text, "" if none), description}].
py::list verbs() {
  CLI::App app{"layoutx: design-space explorer and cost model for LLM decode steps on the Hexagon NPU", "layoutx"};
  layoutx::cli::build_app(app);
  py::list out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    py::dict verb;
    verb["name"] = sub->get_name();
    verb["description"] = sub->get_description();
    std::ostringstream help, ignored;  // exactly what `layoutx VERB --help` prints
    layoutx::cli::run_layoutx({sub->get_name(), "--help"}, help, ignored);
    verb["help"] = help.str();
    py::list options;
    for (const CLI::Option* o : sub->get_options()) {
      if (o == sub->get_help_ptr() || o == sub->get_help_all_ptr()) continue;
      py::dict d;
      const bool positional = o->get_lnames().empty();
      d["name"] = positional ? o->get_name() : o->get_lnames().front();
      d["positional"] = positional;
      d["flag"] = o->get_expected_max() == 0;
      d["multiple"] = o->get_expected_max() > 1 || o->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
      d["required"] = o->get_required();
      d["type"] = o->get_type_name();
      d["default"] = o->get_default_str();
      d["description"] = o->get_description();
      options.append(d);
    }
    verb["options"] = options;
    out.append(verb);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_layoutx, m) {
  m.doc() = "layoutx's command-line app in process (use the layoutx package, not this module)";
  m.def("run", &run, py::arg("args"),
        "Runs `layoutx ARGS...` in process; returns (exit status, stdout text, stderr text).");
  m.def("ort_harness_dir", &layoutx::emit::ort_harness_dir,
        "The ONNX Runtime harness folder (scripts/ort, or $LAYOUTX_ORT_DIR) layoutx itself uses.");
  m.def("ort_unavailable_reason", &layoutx::emit::ort_unavailable_reason,
        "Why ONNX Runtime cannot run here, or None when it can.");
  m.def("verbs", &verbs, "The verbs and their flags as the command-line app defines them.");
}
