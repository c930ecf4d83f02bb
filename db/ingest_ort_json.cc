// ONNX Runtime profile JSON (SessionOptions enableProfiling; shared/docs/profile-formats.md): a
// JSON array of trace events. Per-node events have cat "Node", name (node name plus a suffix
// such as "_kernel_time"), dur in microseconds, and args with op_name and provider. We keep the
// "_kernel_time" events when there are any (the fence events around them are bookkeeping), else
// every Node event. A node's n-th event belongs to the n-th run; a run's time is the sum of its
// nodes' durations (boundary ort_node).
#include <map>

#include "db/profile.h"
#include "support/yaml_reader.h"

namespace layoutx::db {

namespace {
bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}
}  // namespace

Profile parse_ort_json(std::string_view text, const std::string& name) {
  // 1. Parse.
  YAML::Node doc = load_yaml_text(std::string(text), name);
  if (!doc.IsSequence()) throw Error(where(name, doc) + ": an ONNX Runtime profile must be a JSON array of trace events");
  ErrorList errors;
  Profile prof;
  prof.format = Format::kOrtJson;
  prof.tool = "onnxruntime";
  prof.boundary = "ort_node";
  // 2. Node events, checked.
  struct Event {
    std::string name, op_name, provider;
    double dur_us = 0;
  };
  std::vector<Event> events;
  bool any_kernel = false;
  for (size_t i = 0; i < doc.size(); ++i) {
    MapReader e(name, doc[i], "[" + std::to_string(i) + "]", errors);
    if (!e.ok()) continue;
    auto cat = e.string("cat", false);
    if (!cat || *cat != "Node") continue;
    Event ev;
    ev.name = e.string("name", true).value_or("");
    ev.dur_us = e.number("dur", true, 0.0).value_or(0.0);
    YAML::Node args = e.child("args", false);
    if (args.IsDefined() && !args.IsNull()) {
      MapReader a(name, args, e.key_path("args"), errors);
      if (a.ok()) {
        ev.op_name = a.string("op_name", false).value_or("");
        ev.provider = a.string("provider", false).value_or("");
      }
    }
    any_kernel = any_kernel || ends_with(ev.name, "_kernel_time");
    events.push_back(std::move(ev));
  }
  errors.throw_if_any();
  if (events.empty()) throw Error(name + ": no trace events with cat \"Node\"");
  // 3. Ops per run, and each run's total.
  std::map<std::string, int> occurrences;
  std::vector<double> run_us;
  for (auto& ev : events) {
    if (any_kernel && !ends_with(ev.name, "_kernel_time")) continue;
    OpRecord op;
    op.name = any_kernel ? ev.name.substr(0, ev.name.size() - 12) : ev.name;
    op.type = ev.op_name;
    op.compute_unit = ev.provider;
    op.ms = ev.dur_us / 1000.0;
    op.inference = occurrences[op.name]++;
    if (run_us.size() <= static_cast<size_t>(op.inference)) run_us.resize(static_cast<size_t>(op.inference) + 1, 0.0);
    run_us[static_cast<size_t>(op.inference)] += ev.dur_us;
    prof.ops.push_back(std::move(op));
  }
  LayerRecord total;
  for (double& v : run_us) v /= 1000.0;
  total.ms = median(run_us);
  total.samples = static_cast<int>(run_us.size());
  prof.layers.push_back(total);
  prof.notes = std::to_string(run_us.size()) + " runs, " + std::to_string(prof.ops.size()) + " node events";
  return prof;
}

}  // namespace layoutx::db
