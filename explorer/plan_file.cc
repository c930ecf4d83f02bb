#include "explorer/plan_file.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>

#include "model/variant.h"

namespace layoutx::explorer {

namespace {

// A figure with fixed decimals, as the file has always spelled it (e.g. 0.123400).
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void emit_entry(YAML::Emitter& y, const PlanFileEntry& e, size_t rank) {
  const PlannedMeasurement& t = *e.measurement;
  auto quoted = [&](const char* key, const std::string& v) {
    y << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << v;
  };
  y << YAML::BeginMap;
  y << YAML::Key << "rank" << YAML::Value << rank;
  y << YAML::Key << "kind" << YAML::Value << to_string(t.kind);
  quoted("variant_key", t.variant.key());
  y << YAML::Key << "layer" << YAML::Value << model::to_string(t.layer.type);
  y << YAML::Key << "ctx" << YAML::Value << t.ctx;
  y << YAML::Key << "cache_entries" << YAML::Value << t.layer.cache_entries;
  y << YAML::Key << "predicted_ms" << YAML::Value << fixed(t.predicted_ms, 6);
  if (t.kind == PlannedMeasurement::Kind::kOpProfile) y << YAML::Key << "op_class" << YAML::Value << t.profile_class;
  y << YAML::Key << "value_ms_per_step" << YAML::Value << fixed(t.value_ms, 6);
  y << YAML::Key << "p_choice_changes" << YAML::Value << fixed(t.p_choice_changes, 4);
  quoted("settles", e.settles);
  y << YAML::Key << "bundle" << YAML::Value << e.bundle;
  quoted("submit", e.submit);
  quoted("ingest", e.ingest);
  y << YAML::EndMap;
}

}  // namespace

std::string plan_file_yaml(const PlanFile& f) {
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "schema" << YAML::Value << kPlanSchema;
  y << YAML::Key << "model" << YAML::Value << f.model;
  y << YAML::Key << "device" << YAML::Value << f.device;
  y << YAML::Key << "calibration_id" << YAML::Value << f.calibration_id;
  y << YAML::Key << "measurements" << YAML::Value << YAML::BeginSeq;
  for (size_t i = 0; i < f.measurements.size(); ++i) emit_entry(y, f.measurements[i], i + 1);
  y << YAML::EndSeq << YAML::EndMap;
  return std::string(
             "# layoutx next: the measurements that would most improve the open decisions, most valuable first.\n"
             "# value_ms_per_step: expected reduction of the decode step's latency after the measurement\n"
             "# (knowledge gradient for timings and op-level profiles; P(compiles) x saving for compile-only checks).\n"
             "# op-profile: a per-op profile of a build already timed; its op rows are stored by ingest, but\n"
             "# `calibrate --db` does not fit per-op rows yet: add the class's share to the measurements file.\n") +
         y.c_str() + "\n";
}

}  // namespace layoutx::explorer
