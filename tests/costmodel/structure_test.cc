// The structure-switch table (costmodel/structure.h): every switch reaches the text a
// calibration's hash covers, so flipping one makes a saved calibration stale instead of loading
// it as fresh; a switch added to the table reaches it without code of its own, and leaves the
// text of structures at its default as it was (saved calibrations stay fresh).
#include "costmodel/structure.h"

#include <gtest/gtest.h>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "costmodel/hypotheses_document.h"
#include "support/error.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {
namespace {

// `yaml` (a structure map) read over `s` by `table`; the errors' text.
Structure read(const StructureTable& table, const std::string& yaml, Structure s, std::string* errors = nullptr) {
  ErrorList list;
  MapReader m("s.yaml", YAML::Load(yaml), "structure", list);
  s = table.parse(m, s);
  m.finish();
  if (errors) {
    try {
      list.throw_if_any();
    } catch (const Error& e) {
      *errors = e.what();
    }
  }
  return s;
}

// A value of switch i other than its default: the next choice, or the default plus one.
double another_value(const StructureSwitch& w) {
  if (!w.choices.empty()) return w.default_value == 0 ? 1 : 0;
  return w.default_value + 1;
}

// The shipped switches: each one flipped changes the hash text, the calibration source hash and
// the hypotheses' source hash of the device (a stale saved file is refitted, not loaded).
TEST(StructureTable, EveryShippedSwitchReachesTheCalibrationHashes) {
  const DeviceSpec base = load_device_named("galaxy-s25");
  const auto& switches = StructureTable::shipped().switches();
  ASSERT_EQ(switches.size(), static_cast<size_t>(Switch::kHeadChains) + 1);
  for (size_t i = 0; i < switches.size(); ++i) {
    DeviceSpec d = base;
    d.structure.set(i, another_value(switches[i]));
    EXPECT_NE(to_text(d.structure), to_text(base.structure)) << switches[i].key;
    EXPECT_NE(source_hash({"data"}, d), source_hash({"data"}, base)) << switches[i].key;
  }
  // A hypothesis's structure is in the hypotheses' hash too.
  DeviceSpec d = base;
  std::vector<HypothesisSpec> hyps(base.hypotheses.begin(), base.hypotheses.end());
  ASSERT_FALSE(hyps.empty());
  hyps.front().structure.set(Switch::kTileRows, hyps.front().structure.hmx_tile_rows() + 1);
  d.hypotheses = hyps;
  EXPECT_NE(hypotheses_source_hash({"data"}, d), hypotheses_source_hash({"data"}, base));
}

// The hash text of the shipped structures is what the saved calibrations were hashed with.
TEST(StructureTable, TheHashTextIsTheOneTheSavedFilesWereMadeWith) {
  EXPECT_EQ(to_text(Structure{}), "structure tile_rows 1 vtcm_budget_mb 0 live_min_kb 64 w4 packed softmax as_written");
  Structure s;
  s.set(Switch::kRelayoutCacheInputs, 1);
  s.set(Switch::kVtcmBudgetMb, 2.5);
  EXPECT_EQ(to_text(s), "structure tile_rows 1 vtcm_budget_mb 2.5 live_min_kb 64 w4 packed softmax as_written cache_inputs relaid");
}

// A throwaway switch added to the table (as the next release would add one): read from YAML,
// spelled in the hash text when set, kept by the effective structure, refused with the allowed
// words when misspelled; at its default the text is the shipped one (old hashes stay valid).
TEST(StructureTable, AThrowawaySwitchReachesTheHashText) {
  const StructureTable& shipped = StructureTable::shipped();
  const StructureTable t = shipped.with_switch(
      {.key = "throwaway", .hash_name = "throwaway", .choices = {"off", "on"}, .meaning = "a test's switch"});
  const Structure at_default = t.defaults();
  EXPECT_EQ(t.text(at_default), shipped.text(Structure{}));
  const Structure on = read(t, "{throwaway: on, hmx_tile_rows: 2}", at_default);
  EXPECT_EQ(t.value_text(on, shipped.switches().size()), "on");
  EXPECT_NE(t.text(on), t.text(at_default));
  EXPECT_NE(t.text(on).find(" throwaway on"), std::string::npos) << t.text(on);
  EXPECT_NE(t.text(on).find("tile_rows 2"), std::string::npos) << t.text(on);
  EXPECT_EQ(t.effective(on, GraphFacts{}).get(shipped.switches().size()), 1.0);
  std::string errors;
  read(t, "{throwaway: maybe}", at_default, &errors);
  EXPECT_NE(errors.find("structure.throwaway: expected off or on, got 'maybe'"), std::string::npos) << errors;
  // The shipped table does not know it: a device naming it is an error, not a silent default.
  errors.clear();
  read(shipped, "{throwaway: on}", Structure{}, &errors);
  EXPECT_NE(errors.find("throwaway"), std::string::npos) << errors;
}

// The effective structure clears what does not apply to a graph (one featurization is shared).
TEST(StructureTable, TheEffectiveStructureClearsWhatAGraphCannotSee) {
  Structure s;
  s.set(Switch::kW4Weights, 1);
  s.set(Switch::kFuseExplicitSoftmax, 1);
  s.set(Switch::kVtcmBudgetMb, 2.5);
  s.set(Switch::kRelayoutCacheInputs, 1);
  GraphFacts fp16{model::Precision::kFp16, model::SoftmaxForm::kFused, [](double) { return false; }};
  const Structure e = StructureTable::shipped().effective(s, fp16);
  EXPECT_EQ(e.w4_weights(), W4Weights::kPacked);
  EXPECT_FALSE(e.fuse_explicit_softmax());
  EXPECT_EQ(e.vtcm_budget_mb(), 1.0);
  EXPECT_FALSE(e.relayout_cache_inputs());
  GraphFacts w4{model::Precision::kW4A16, model::SoftmaxForm::kExplicit, [](double) { return true; }};
  const Structure f = StructureTable::shipped().effective(s, w4);
  EXPECT_EQ(f.w4_weights(), W4Weights::kExpanded);
  EXPECT_TRUE(f.fuse_explicit_softmax());
  EXPECT_TRUE(f.relayout_cache_inputs());
}

// w4-expanded-matmul (issue 36): a per-channel 4-bit weight costs its 8-bit bytes when a MatMul
// reads it and its packed bytes when a 1x1 Conv does; block-quantized ones stream packed. The
// effective structure says the same per graph (what the featurization cache shares by).
TEST(StructureTable, ExpandedMatMulExpandsWhatAMatMulReadsAndNotAConv) {
  Structure s;
  s.set(Switch::kW4Weights, static_cast<double>(W4Weights::kExpandedMatMul));
  EXPECT_TRUE(s.w4_expanded(0, false));
  EXPECT_FALSE(s.w4_expanded(0, true));
  EXPECT_FALSE(s.w4_expanded(64, false));
  Structure pc;
  pc.set(Switch::kW4Weights, static_cast<double>(W4Weights::kExpandedPerChannel));
  EXPECT_TRUE(pc.w4_expanded(0, true)) << "per channel: a Conv's weights expand too";
  GraphFacts matmul{model::Precision::kW4A16, model::SoftmaxForm::kFused, [](double) { return false; }};
  GraphFacts conv = matmul;
  conv.conv_projections = true;
  GraphFacts block = matmul;
  block.block_weights = true;
  EXPECT_EQ(StructureTable::shipped().effective(s, matmul).w4_weights(), W4Weights::kExpanded);
  EXPECT_EQ(StructureTable::shipped().effective(s, conv).w4_weights(), W4Weights::kPacked);
  EXPECT_EQ(StructureTable::shipped().effective(s, block).w4_weights(), W4Weights::kPacked);
  EXPECT_EQ(StructureTable::shipped().effective(pc, conv).w4_weights(), W4Weights::kExpanded);
}

}  // namespace
}  // namespace layoutx::costmodel
