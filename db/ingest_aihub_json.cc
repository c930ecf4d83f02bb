// Qualcomm AI Hub profile JSON (ProfileJob.download_profile(); shared/docs/profile-formats.md):
// execution_summary (estimated_inference_time in microseconds, the headline figure; sample lists
// all_*_times in microseconds; peak-memory ranges in bytes) and execution_detail (one object per
// layer: name, type, compute_unit, execution_time in microseconds, execution_cycles when the
// device reported it). Parsed with yaml-cpp, which reads JSON and marks line:col.
// Keys we do not read are tolerated here (AI Hub adds fields over time); keys we read are checked.
#include "db/profile.h"
#include "support/yaml_reader.h"

namespace layoutx::db {

namespace {

// A list of non-negative numbers (microseconds or bytes); errors name the element.
std::vector<double> number_list(MapReader& r, std::string_view key, ErrorList& errors) {
  std::vector<double> out;
  YAML::Node n = r.child(key, false);
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence()) {
    errors.add(r.at(key) + "must be a list of numbers");
    return out;
  }
  for (size_t i = 0; i < n.size(); ++i) {
    double v = 0;
    try {
      v = n[i].as<double>();
    } catch (const YAML::Exception&) {
      errors.add(where(r.file(), n[i]) + ": " + r.key_path(key) + "[" + std::to_string(i) + "]: must be a number");
      continue;
    }
    if (v < 0) {
      errors.add(where(r.file(), n[i]) + ": " + r.key_path(key) + "[" + std::to_string(i) + "]: negative value " +
                 n[i].Scalar());
      continue;
    }
    out.push_back(v);
  }
  return out;
}

std::string range_note(MapReader& r, std::string_view key, ErrorList& errors) {
  auto v = number_list(r, key, errors);
  if (v.empty()) return "";
  if (v.size() != 2) {
    errors.add(r.at(key) + "must be a two-element range [low, high]");
    return "";
  }
  return std::string(key) + " [" + std::to_string(static_cast<long long>(v[0])) + ", " +
         std::to_string(static_cast<long long>(v[1])) + "] B";
}

}  // namespace

Profile parse_aihub_json(std::string_view text, const std::string& name) {
  // 1. Parse (a syntax error such as a truncated file throws with line:col).
  YAML::Node doc = load_yaml_text(std::string(text), name);
  ErrorList errors;
  Profile prof;
  prof.format = Format::kAihubJson;
  prof.tool = "qai-hub";
  prof.boundary = "aihub_estimate";
  MapReader top(name, doc, "", errors);
  if (!top.ok()) errors.throw_if_any();
  // 2. The summary: the headline time and the samples.
  YAML::Node summary_node = top.child("execution_summary", true);
  YAML::Node detail_node = top.child("execution_detail", true);
  if (summary_node.IsDefined() && !summary_node.IsNull()) {
    MapReader s(name, summary_node, "execution_summary", errors);
    if (s.ok()) {
      auto est = s.number("estimated_inference_time", true, 0.0);
      auto samples = number_list(s, "all_inference_times", errors);
      LayerRecord total;
      total.ms = est.value_or(0.0) / 1000.0;  // microseconds -> ms
      total.samples = samples.empty() ? 1 : static_cast<int>(samples.size());
      prof.layers.push_back(total);
      std::string notes;
      auto add = [&](const std::string& s) {
        if (!s.empty()) notes += (notes.empty() ? "" : "; ") + s;
      };
      if (auto m = s.number("estimated_inference_peak_memory", false, 0.0))
        add("estimated_inference_peak_memory " + std::to_string(static_cast<long long>(*m)) + " B");
      for (const char* k : {"inference_memory_peak_range", "first_load_memory_increase_range",
                            "first_load_memory_peak_range", "warm_load_memory_increase_range",
                            "warm_load_memory_peak_range", "compile_memory_increase_range",
                            "compile_memory_peak_range"})
        add(range_note(s, k, errors));
      if (!samples.empty())
        add("all_inference_times median " + std::to_string(median(samples) / 1000.0) + " ms over " +
            std::to_string(samples.size()));
      for (const char* k : {"all_first_load_times", "all_warm_load_times", "all_compile_times"}) number_list(s, k, errors);
      for (const char* k : {"first_load_time", "warm_load_time", "compile_time"}) s.number(k, false, 0.0);
      prof.notes = notes;
    }
  }
  // 3. Per-layer detail.
  if (detail_node.IsDefined() && !detail_node.IsNull()) {
    if (!detail_node.IsSequence()) {
      errors.add(where(name, detail_node) + ": execution_detail: must be a list of layer objects");
    } else {
      for (size_t i = 0; i < detail_node.size(); ++i) {
        MapReader d(name, detail_node[i], "execution_detail[" + std::to_string(i) + "]", errors);
        if (!d.ok()) continue;
        OpRecord op;
        op.name = d.string("name", true).value_or("");
        op.type = d.string("type", true).value_or("");
        op.compute_unit = d.string("compute_unit", false).value_or("");
        if (auto t = d.number("execution_time", true, 0.0)) op.ms = *t / 1000.0;
        if (auto c = d.integer("execution_cycles", false, 0)) op.cycles = *c;
        prof.ops.push_back(std::move(op));
      }
    }
  }
  errors.throw_if_any();
  return prof;
}

}  // namespace layoutx::db
