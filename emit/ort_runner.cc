#include "emit/ort_runner.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/atomic_file.h"
#include "support/error.h"
#include "support/yaml_reader.h"

namespace layoutx::emit {

namespace fs = std::filesystem;

namespace {

std::string node_binary() {
  const char* e = std::getenv("LAYOUTX_NODE");
  return e && *e ? e : "node";
}
std::string run_js() { return (fs::path(ort_harness_dir()) / "run.js").string(); }

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

}  // namespace

std::string ort_harness_dir() {
  const char* e = std::getenv("LAYOUTX_ORT_DIR");
  return e && *e ? e : LAYOUTX_ORT_DIR;
}

std::optional<std::string> ort_unavailable_reason() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    std::error_code ec;
    if (!fs::exists(run_js(), ec)) return "the ORT harness " + run_js() + " is missing";
    RunResult r = run_command({node_binary(), run_js(), "--version"});
    if (r.status == 127) return "Node.js ('" + node_binary() + "') is not installed";
    if (r.status != 0)
      return "onnxruntime-node is not usable (run scripts/setup to install it in " + ort_harness_dir() + "): " + r.err;
    return std::nullopt;
  }();
  return reason;
}

std::string ort_version() {
  if (auto why = ort_unavailable_reason()) throw Error("ONNX Runtime: " + *why);
  RunResult r = run_command({node_binary(), run_js(), "--version"});
  try {
    YAML::Node n = YAML::Load(r.out);
    return n["onnxruntime"].as<std::string>();
  } catch (const YAML::Exception& e) {
    throw Error("ONNX Runtime harness: --version printed no onnxruntime version (" + e.msg + "): " + r.out);
  }
}

MeasureResult ort_measure(const std::string& model_path, const TensorMap& inputs, const std::string& work_dir,
                          const MeasureOptions& opt) {
  if (auto why = ort_unavailable_reason()) throw Error("ONNX Runtime: " + *why);
  const std::string in_dir = (fs::path(work_dir) / "inputs").string();
  const std::string out_dir = (fs::path(work_dir) / "ort").string();
  std::error_code ec;
  fs::remove_all(out_dir, ec);
  if (ec) throw Error(out_dir + ": cannot clear the previous run's outputs (" + ec.message() + ")");
  write_tensors(in_dir, inputs);
  std::vector<std::string> argv = {node_binary(), run_js(), model_path, in_dir, out_dir,
                                   "--runs", std::to_string(opt.runs), "--warmup", std::to_string(opt.warmup),
                                   "--threads", std::to_string(opt.threads)};
  if (!opt.profile) argv.push_back("--no-profile");
  RunResult r = run_command(argv);
  if (r.status != 0) throw Error("ONNX Runtime run of " + model_path + " failed (exit " + std::to_string(r.status) + "): " + r.err);

  MeasureResult m;
  m.out_dir = out_dir;
  m.outputs = read_tensors(out_dir);
  m.timings_path = (fs::path(out_dir) / "timings.json").string();
  YAML::Node t = load_yaml_file(m.timings_path);
  try {  // written by our own harness (scripts/ort/run.js); a malformed one is still an Error
    for (const auto& x : t["warmup_ms"]) m.warmup_ms.push_back(x.as<double>());
    for (const auto& x : t["runs_ms"]) m.runs_ms.push_back(x.as<double>());
    m.session_create_ms = t["session_create_ms"].as<double>();
    m.ort_version = t["onnxruntime"].as<std::string>();
    if (t["profile_file"] && !t["profile_file"].IsNull())
      m.profile_path = (fs::path(out_dir) / t["profile_file"].as<std::string>()).string();
  } catch (const YAML::Exception& e) {
    throw Error(m.timings_path + ": unexpected content from the ONNX Runtime harness (" + e.msg + ")");
  }
  return m;
}

OrtSession::OrtSession(const std::string& model_path, const std::string& work_dir, int threads)
    : work_dir_(work_dir), stderr_path_((fs::path(work_dir) / "ort_serve.stderr").string()) {
  if (auto why = ort_unavailable_reason()) throw Error("ONNX Runtime: " + *why);
  ensure_directory(work_dir);
  proc_ = std::make_unique<Subprocess>(
      std::vector<std::string>{node_binary(), run_js(), "--serve", model_path, "--threads", std::to_string(threads)},
      stderr_path_);
}

OrtSession::~OrtSession() = default;

TensorMap OrtSession::run(const TensorMap& inputs) {
  const std::string tag = "call" + std::to_string(calls_++);
  const std::string in_dir = (fs::path(work_dir_) / tag / "in").string();
  const std::string out_dir = (fs::path(work_dir_) / tag / "out").string();
  write_tensors(in_dir, inputs);
  proc_->write_line(in_dir + " " + out_dir);
  std::string reply;
  if (!proc_->read_line(reply)) {
    int st = proc_->wait();
    throw Error("ONNX Runtime harness exited (status " + std::to_string(st) + "): " + slurp(stderr_path_));
  }
  if (reply != "ok") throw Error("ONNX Runtime: " + reply);
  TensorMap out = read_tensors(out_dir);
  fs::remove_all(fs::path(work_dir_) / tag);
  return out;
}

}  // namespace layoutx::emit
