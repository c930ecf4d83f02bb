// Calibration data files: the shipped one loads; each bad fixture fails with its message.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "costmodel/device_spec.h"
#include "costmodel/measurements.h"
#include "support/error.h"
#include "tests/error_message.h"

namespace layoutx::costmodel {
namespace {

const std::string kConfigs = LAYOUTX_CONFIG_DIR;
const std::string kFixtures = std::string(LAYOUTX_TEST_DIR) + "/fixtures/calibration/";

std::string error_of(const std::string& fixture) {
  return testing::error_message([&] { load_measurements(kFixtures + fixture); });
}

TEST(Measurements, ShippedDataMapsEveryRecordToAGraph) {
  auto recs = load_measurements(kConfigs + "/calibration/spark-s25-measurements.yaml");
  int timings = 0, shares = 0;
  for (const auto& r : recs) (r.kind == MeasurementRecord::Kind::kLayerTime ? timings : shares)++;
  EXPECT_EQ(timings, 14);
  EXPECT_EQ(shares, 6);
  for (const auto& r : recs) {
    if (r.id == "sliding-sj-tanh-fp16") {
      EXPECT_EQ(r.variant.gelu(), model::GeluForm::kTanh);
      EXPECT_EQ(r.variant.join(), model::Join::kScores);
      EXPECT_EQ(r.ms, 1.535);
    }
    if (r.id == "sj-gelu-sliding") {
      EXPECT_DOUBLE_EQ(r.share, 0.12);  // the 11-13% band's midpoint
      EXPECT_DOUBLE_EQ(r.sd, 0.005);    // +-2 sd = the band
    }
  }
}

TEST(Measurements, NegativeTime) {
  std::string e = error_of("negative_time.yaml");
  EXPECT_NE(e.find("negative_time.yaml:6:"), std::string::npos) << e;
  EXPECT_NE(e.find("layer_latency[1].ms: must be in"), std::string::npos) << e;
  EXPECT_NE(e.find("got -2.964"), std::string::npos) << e;
}

TEST(Measurements, UnknownVariantAxis) {
  std::string e = error_of("unknown_axis.yaml");
  EXPECT_NE(e.find("unknown_axis.yaml:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("variant.kv_layout"), std::string::npos) << e;
}

TEST(Measurements, ShareAboveOne) {
  std::string e = error_of("share_above_one.yaml");
  EXPECT_NE(e.find("share_above_one.yaml:7:"), std::string::npos) << e;
  EXPECT_NE(e.find("op_share[0].share: must be in [0, 1], got 1.5"), std::string::npos) << e;
}

TEST(Measurements, RecordsThatMatchNoGraph) {
  std::string e = error_of("no_graph.yaml");
  EXPECT_NE(e.find("no_graph.yaml:9:"), std::string::npos) << e;
  EXPECT_NE(e.find("bad: matches no graph: op pattern 'cache/*_window' matches no lowered op"), std::string::npos) << e;
  EXPECT_NE(e.find("no_graph.yaml:7:"), std::string::npos) << e;
  EXPECT_NE(e.find("wrong-cache: matches no graph: cache_entries 1023 but a sliding layer at context 4096 holds 511"),
            std::string::npos)
      << e;
}

TEST(Measurements, ShareWithoutTimingOfItsLayer) {
  std::string e = error_of("share_without_timing.yaml");
  EXPECT_NE(e.find("orphan: matches no timed graph"), std::string::npos) << e;
}

TEST(Measurements, UnknownKeyIsAnError) {
  try {
    load_measurements_text("version: 1\nmodel: spark-x2.5-1.7b\nlayer_latency:\n  - {id: a, layer: full, context: 1024, variant: {precision: fp16}, ms: 1, msec: 2}\n",
                           "x.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer_latency[0].msec: unknown key"), std::string::npos) << e.what();
  }
}

// The calibration reads the format through the one reader (model/measurement_file.h) and adds
// its own requirements: the shared data's looser records, which ingest stores, are refused here.
TEST(Measurements, CalibrationRefusesWhatOnlyIngestAdmits) {
  const std::string head = "version: 1\nmodel: spark-x2.5-1.7b\n";
  const std::string timing =
      "layer_latency:\n  - {id: a, layer: full, context: 1024, variant: {precision: fp16}, ms: 1.5}\n";
  auto error_in = [&](const std::string& text) {
    return testing::error_message([&] { load_measurements_text(text, "x.yaml"); });
  };
  EXPECT_NE(error_in(head + "layer_latency:\n  - {layer: full, context: 1024, precision: fp16, ms: 1.5}\n")
                .find("layer_latency[0].id: required key is missing"),
            std::string::npos);
  EXPECT_NE(error_in(head + "layer_latency:\n  - {id: a, layer: full, context: unstated, precision: fp16, ms: 1}\n")
                .find("layer_latency[0].context"),
            std::string::npos);
  EXPECT_NE(error_in(head + timing + "op_share:\n  - {id: s, layer: any, context: 1024, precision: fp16, ops: [mlp/act], share: 0.1}\n")
                .find("op_share[0].layer: must be sliding or full, got \"any\""),
            std::string::npos);
  EXPECT_NE(error_in(head + timing + "op_share:\n  - {id: s, layer: full, context: 1024, precision: fp16, op: gelu, share: 0.1}\n")
                .find("op_share[0].ops: required key is missing"),
            std::string::npos);
  EXPECT_NE(error_in(head + timing + "compile:\n  - {precision: w4a16, form: f, result: fail}\n")
                .find("converter outcomes belong in the rules file"),
            std::string::npos);
  // Flat axes (the shared data's shape) read as the nested variant does.
  auto flat = load_measurements_text(head + "layer_latency:\n  - {id: a, layer: full, context: 1024, returns: new_entry, join: scores, precision: fp16, ms: 1.5}\n", "x.yaml");
  auto nested = load_measurements_text(head + "layer_latency:\n  - {id: a, layer: full, context: 1024, variant: {returns: new_entry, join: scores, precision: fp16}, ms: 1.5}\n", "x.yaml");
  ASSERT_EQ(flat.size(), 1u);
  ASSERT_EQ(nested.size(), 1u);
  EXPECT_EQ(flat[0].variant.key(), nested[0].variant.key());
  EXPECT_EQ(flat[0].variant.key(), "returns=new_entry,join=scores,precision=fp16");
}

// `export: N` (model/measurement_file.h): an integer >= 1 naming the device's export, on every
// timing and share or on none; the shipped file tags roll as export 1 and score-join as 2.
TEST(Measurements, ExportTagIsReadAndCheckedWithItsPlace) {
  const std::string head = "version: 1\nmodel: spark-x2.5-1.7b\nlayer_latency:\n";
  const std::string a = "  - {id: a, layer: full, context: 1024, variant: {precision: fp16}, ms: 1.5";
  const std::string b = "  - {id: b, layer: full, context: 4096, variant: {precision: fp16}, ms: 2.5";
  auto error_in = [&](const std::string& text) {
    return testing::error_message([&] { load_measurements_text(text, "x.yaml"); });
  };
  auto recs = load_measurements_text(head + a + ", export: 1}\n" + b + ", export: 2}\n", "x.yaml");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].export_index, 1);
  EXPECT_EQ(recs[1].export_index, 2);
  EXPECT_EQ(load_measurements_text(head + a + "}\n", "x.yaml")[0].export_index, 0);  // not stated
  // Tagging a file does not change what the calibration's data hash covers.
  EXPECT_EQ(canonical_text(recs), canonical_text(load_measurements_text(head + a + "}\n" + b + "}\n", "x.yaml")));
  EXPECT_NE(error_in(head + a + ", export: 0}\n").find("x.yaml:4:86: layer_latency[0].export: must be an integer in [1, 16], got 0"),
            std::string::npos)
      << error_in(head + a + ", export: 0}\n");
  EXPECT_NE(error_in(head + a + ", export: second}\n").find("x.yaml:4:86: layer_latency[0].export:"), std::string::npos);
  EXPECT_NE(error_in(head + a + ", export: 1.5}\n").find("layer_latency[0].export:"), std::string::npos);
  // All or none: the record without one is named with its place.
  const std::string e = error_in(head + a + ", export: 1}\n" + b + "}\n");
  EXPECT_NE(e.find("x.yaml:5:5: layer_latency 'b': export: missing"), std::string::npos) << e;
  // The shipped file: roll (and the full layers' key concat) is the first export, score-join the
  // second, ring (a sliding layer returning the new entry, keys joined) the third.
  for (const auto& r : load_measurements(kConfigs + "/calibration/spark-s25-measurements.yaml")) {
    const bool ring = r.layer == model::LayerType::kSliding && r.variant.join() == model::Join::kKeys &&
                      r.variant.returns() == model::KvReturn::kNewEntry;
    EXPECT_EQ(r.export_index, r.variant.join() == model::Join::kScores ? 2 : ring ? 3 : 1) << r.id;
  }
}

TEST(DeviceSpec, ShippedLoadsAndRejectsTwoCoefficientsForOneCell) {
  DeviceSpec d = load_device(kConfigs + "/devices/galaxy-s25.yaml");
  EXPECT_DOUBLE_EQ(d.dram_gbps, 84.8);
  EXPECT_EQ(d.channel_pad, 32);
  const int w8 = d.index(OpClass::kMatMulWeight, model::Precision::kW8A16, Term::kByte);
  ASSERT_GE(w8, 0);
  EXPECT_NEAR(d.coefficients[static_cast<size_t>(w8)].prior, 1e3 / 84.8, 1e-9);  // us per MB at 84.8 GB/s
  const std::string text =
      "name: d\ndram_bandwidth_gbps: 10\ncoefficients:\n"
      "  - {name: a, classes: [output], precisions: [fp16], gbps: 1, rel_sd: 1, reason: r}\n"
      "  - {name: b, classes: [output], precisions: [fp16], gbps: 2, rel_sd: 1, reason: r}\n";
  try {
    load_device_text(text, "d.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'a' and 'b' both price the byte term of output at fp16"), std::string::npos)
        << e.what();
  }
}

// Every combination of one option per axis is a hypothesis that calibrate fits: axes that multiply
// past model::limits::kMaxHypotheses are an error naming the axis, not minutes of fitting (the
// device fuzzer found a file that took longer than its 10 s timeout to load).
TEST(DeviceSpec, AxesThatMultiplyPastTheLimitAreAnError) {
  std::ifstream in(kConfigs + "/devices/galaxy-s25.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(load_device_text(text, "s25.yaml").hypotheses.size(), 960u);
  for (int i = 0; i < 4; ++i)  // 960 x 3^4 = 77760
    text += "  - axis: extra" + std::to_string(i) + "\n    options:\n" +
            "      - {name: a, claim: c, source: s}\n      - {name: b, claim: c, source: s}\n" +
            "      - {name: c, claim: c, source: s}\n";
  try {
    load_device_text(text, "s25.yaml");
    FAIL() << "loaded 77760 hypotheses";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hypothesis_axes[6]: the axes so far combine into 960 x 3 hypotheses, more than 1024"),
              std::string::npos)
        << e.what();
  }
}


// The runtime block (issue 35): the shipped device's terms read back; a term's range must hold
// its value, and a misspelt key is an error naming it.
TEST(DeviceSpec, RuntimeTermsAreReadWithTheirRangesAndCheckedForOrder) {
  const DeviceSpec d = load_device(kConfigs + "/devices/galaxy-s25.yaml");
  ASSERT_TRUE(d.runtime.present);
  EXPECT_DOUBLE_EQ(d.runtime.rpc_polling_us, 9999);
  EXPECT_EQ(d.runtime.max_binaries, 50);
  EXPECT_LE(d.runtime.host_call_us.low, d.runtime.host_call_us.value);
  EXPECT_LE(d.runtime.host_call_us.value, d.runtime.host_call_us.high);
  EXPECT_FALSE(d.runtime.sampling_ns_per_vocab.reason.empty());
  EXPECT_LE(d.runtime.merge_saving_us.value, d.runtime.merge_saving_us.high);
  EXPECT_FALSE(d.runtime.merge_saving_us.reason.empty());
  std::ifstream in(kConfigs + "/devices/galaxy-s25.yaml");
  const std::string ok((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto error_of = [&](const std::string& from, const std::string& to) {
    std::string text = ok;
    const size_t at = text.find(from);
    if (at == std::string::npos) return std::string("test: '" + from + "' not in the shipped file");
    text.replace(at, from.size(), to);
    try {
      load_device_text(text, "d.yaml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of("runtime:", "runtime:"), "");
  const std::string low_above = error_of("    value: 35\n    low: 10\n", "    value: 35\n    low: 40\n");
  EXPECT_NE(low_above.find("runtime.host_call_us.value: expected low <= value <= high"), std::string::npos) << low_above;
  const std::string misspelt = error_of("  max_binaries: 50", "  max_binarys: 50");
  EXPECT_NE(misspelt.find("max_binarys"), std::string::npos) << misspelt;
  EXPECT_NE(misspelt.find("runtime.max_binaries: required key is missing"), std::string::npos) << misspelt;
  // Without the block the device still loads: graph execution only.
  const size_t from = ok.find("\nruntime:\n"), to = ok.find("\n# Who the device is");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  EXPECT_FALSE(load_device_text(ok.substr(0, from) + ok.substr(to), "d.yaml").runtime.present);
}

}  // namespace
}  // namespace layoutx::costmodel
