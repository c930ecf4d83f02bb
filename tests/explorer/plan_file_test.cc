// next's plan file (explorer/plan_file.h): the text the verb wrote by hand before it moved here,
// byte for byte, and valid YAML that reads back every field, even when a sentence has quotes.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "explorer/plan_file.h"
#include "model/variant.h"

namespace layoutx::explorer {
namespace {

PlannedMeasurement profile() {
  PlannedMeasurement m;
  m.kind = PlannedMeasurement::Kind::kOpProfile;
  m.variant = model::parse_variant("returns=new_entry,join=keys,precision=fp16");
  m.layer.type = model::LayerType::kFull;
  m.layer.cache_entries = 1023;
  m.ctx = 1024;
  m.predicted_ms = 1.25;
  m.value_ms = 0.0123456789;
  m.p_choice_changes = 0.5;
  m.profile_class = "softmax";
  return m;
}

TEST(PlanFile, SpellsTheFormatNextAlwaysWrote) {
  const PlannedMeasurement m = profile();
  PlanFile f{"spark", "galaxy-s25", "cal-1",
             {{&m, "pins the softmax time", "01-op-profile-full-x", "python3 01/submit_aihub.py", "cd 01 && layoutx ingest a.json"}}};
  const std::string header =
      "# layoutx next: the measurements that would most improve the open decisions, most valuable first.\n"
      "# value_ms_per_step: expected reduction of the decode step's latency after the measurement\n"
      "# (knowledge gradient for timings and op-level profiles; P(compiles) x saving for compile-only checks).\n"
      "# op-profile: a per-op profile of a build already timed; its op rows are stored by ingest, but\n"
      "# `calibrate --db` does not fit per-op rows yet: add the class's share to the measurements file.\n";
  EXPECT_EQ(plan_file_yaml(f), header +
                                   "schema: layoutx-plan/1\nmodel: spark\ndevice: galaxy-s25\ncalibration_id: cal-1\n"
                                   "measurements:\n  - rank: 1\n    kind: op-profile\n    variant_key: \"" +
                                   m.variant.key() +
                                   "\"\n    layer: full\n    ctx: 1024\n    cache_entries: 1023\n"
                                   "    predicted_ms: 1.250000\n    op_class: softmax\n    value_ms_per_step: 0.012346\n"
                                   "    p_choice_changes: 0.5000\n    settles: \"pins the softmax time\"\n"
                                   "    bundle: 01-op-profile-full-x\n    submit: \"python3 01/submit_aihub.py\"\n"
                                   "    ingest: \"cd 01 && layoutx ingest a.json\"\n");
}

TEST(PlanFile, ReadsBackAsYamlEvenWithQuotesInASentence) {
  PlannedMeasurement m = profile();
  m.kind = PlannedMeasurement::Kind::kTiming;
  const std::string settles = "sliding @ ctx 1024: \"ring\" or roll (P it changes = 0.40)";
  PlanFile f{"spark", "d", "c", {{&m, settles, "b1", "s1", "i1"}, {&m, "x", "b2", "s2", "i2"}}};
  const YAML::Node y = YAML::Load(plan_file_yaml(f));
  EXPECT_EQ(y["schema"].as<std::string>(), kPlanSchema);
  ASSERT_EQ(y["measurements"].size(), 2u);
  const YAML::Node e = y["measurements"][0];
  EXPECT_EQ(e["rank"].as<int>(), 1);
  EXPECT_EQ(y["measurements"][1]["rank"].as<int>(), 2);
  EXPECT_EQ(e["kind"].as<std::string>(), "timing");
  EXPECT_FALSE(e["op_class"]);  // a timing pins no class
  EXPECT_EQ(e["variant_key"].as<std::string>(), m.variant.key());
  EXPECT_EQ(e["settles"].as<std::string>(), settles);
  EXPECT_DOUBLE_EQ(e["predicted_ms"].as<double>(), 1.25);
  EXPECT_EQ(e["bundle"].as<std::string>(), "b1");
}

}  // namespace
}  // namespace layoutx::explorer
