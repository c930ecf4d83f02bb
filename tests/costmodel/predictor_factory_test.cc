// The one factory of a device's predictor (costmodel/predictor_factory.h) and its one freshness
// check (costmodel/freshness.h): a document gives the predictor of its kind, whatever source it
// comes from, and callers see what they need through the Predictor interface.
#include <gtest/gtest.h>

#include <sstream>

#include "costmodel/calibration.h"
#include "costmodel/device_fit.h"
#include "costmodel/freshness.h"
#include "costmodel/predictor_factory.h"
#include "model/builder.h"
#include "model/model_loader.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::costmodel {
namespace {

const std::string kConfigs = LAYOUTX_CONFIG_DIR;

model::LayerGraph graph() {
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  return model::build_layer_graph(m.layer(model::LayerType::kFull, 2048), model::parse_variant("ring", {"precision=w8a16"}));
}

void expect_same(const Prediction& a, const Prediction& b) {
  EXPECT_EQ(a.latency_ms, b.latency_ms);
  EXPECT_EQ(a.low_ms, b.low_ms);
  EXPECT_EQ(a.high_ms, b.high_ms);
  EXPECT_EQ(a.floor_ms, b.floor_ms);
  EXPECT_EQ(a.calibration_id, b.calibration_id);
}

// The shipped hypotheses file read as a file is the predictor the device's own files give (the
// file is fresh), members and all; a calibration file gives one calibration, with no hypotheses.
TEST(PredictorFactory, AFileGivesThePredictorOfItsKind) {
  const DeviceSpec dev = load_device_named("galaxy-s25");
  std::ostringstream log;
  const ShippedPredictor shipped = shipped_predictor(dev, log);
  EXPECT_EQ(log.str(), "");
  EXPECT_FALSE(shipped.refitted);
  const auto from_file = predictor_from_file(kConfigs + "/calibration/galaxy-s25.hypotheses.yaml", dev);
  ASSERT_GT(from_file->hypothesis_count(), 0u);
  EXPECT_EQ(from_file->hypothesis_count(), shipped.predictor->hypothesis_count());
  const model::LayerGraph g = graph();
  expect_same(from_file->predict(g), shipped.predictor->predict(g));
  const auto each = from_file->predict_each(g), each_shipped = shipped.predictor->predict_each(g);
  ASSERT_EQ(each.size(), from_file->hypothesis_count());
  ASSERT_EQ(each.size(), each_shipped.size());
  for (size_t h = 0; h < each.size(); ++h) {
    EXPECT_EQ(each[h].name, each_shipped[h].name);
    EXPECT_EQ(each[h].weight, each_shipped[h].weight);
    expect_same(each[h].prediction, each_shipped[h].prediction);
  }
  const auto single = predictor_from_file(kConfigs + "/calibration/galaxy-s25.calibration.yaml", dev);
  EXPECT_EQ(single->hypothesis_count(), 0u);
  EXPECT_TRUE(single->predict_each(g).empty());
  EXPECT_EQ(single->calibration_id(), load_calibration(kConfigs + "/calibration/galaxy-s25.calibration.yaml", dev).id);
}

// What `calibrate --db` stores (DeviceFit::document) reads back as the same predictor, for a
// device with hypotheses and one without.
TEST(PredictorFactory, AStoredDocumentReadsBackAsTheFittedPredictor) {
  const DeviceSpec with = load_device_named("galaxy-s25");
  DeviceSpec without = with;  // the same device spec with no competing hypotheses
  without.hypotheses.clear();
  const std::vector<MeasurementRecord> records = load_measurements(device_file(with.calibration.measurements));
  for (const DeviceSpec* dev : std::initializer_list<const DeviceSpec*>{&with, &without}) {
    const DeviceFit fit = fit_device(records, *dev, {});
    EXPECT_EQ(fit.hypotheses.has_value(), !dev->hypotheses.empty());
    EXPECT_EQ(fit.predictor->hypothesis_count() > 0, !dev->hypotheses.empty());
    const auto back = predictor_from_document(fit.document(), "db: calibrations/x", *dev);
    EXPECT_EQ(back->calibration_id(), fit.predictor->calibration_id());
    EXPECT_EQ(back->hypothesis_count(), fit.predictor->hypothesis_count());
    const model::LayerGraph g = graph();
    // The document prints its numbers to about 10 significant digits: equal to that precision.
    const double fitted = fit.predictor->predict(g).latency_ms;
    EXPECT_NEAR(back->predict(g).latency_ms, fitted, 1e-8 * fitted);
  }
}

TEST(PredictorFactory, AMalformedDocumentNamesItself) {
  const DeviceSpec dev = load_device_named("galaxy-s25");
  try {
    predictor_from_document("hypotheses_document: 1\nmembers: []\n", "db: calibrations/bad", dev);
    FAIL() << "an empty hypotheses document was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("db: calibrations/bad: members"), std::string::npos) << e.what();
  }
  EXPECT_THROW(predictor_from_document("version: 1\n", "db: calibrations/bad", dev), Error);
}

// One check for both kinds: the stamp of the bytes is fresh; a changed byte is not; a
// calibration whose data hash still matches (a comment added) is fresh on the slow path.
TEST(Freshness, TheStampDecidesAndACalibrationFallsBackOnItsDataHash) {
  const DeviceSpec dev = load_device_named("galaxy-s25");
  const std::string path = device_file(dev.calibration.measurements);
  const std::string bytes = read_text_file(path);
  for (SavedFit kind : {SavedFit::kCalibration, SavedFit::kHypotheses}) {
    const std::string stamp = fit_stamp(kind, {bytes}, dev);
    const Freshness fresh = check_freshness(kind, stamp, "", bytes, path, dev);
    EXPECT_TRUE(fresh.fresh);
    EXPECT_FALSE(fresh.parsed);  // the fast path parses nothing
    const Freshness stale = check_freshness(kind, stamp, "", bytes + "# a comment\n", path, dev);
    EXPECT_FALSE(stale.fresh);
  }
  EXPECT_NE(fit_stamp(SavedFit::kCalibration, {bytes}, dev), fit_stamp(SavedFit::kHypotheses, {bytes}, dev));
  const Calibration saved = load_calibration(device_file(dev.calibration.saved), dev);
  const Freshness commented = check_freshness(SavedFit::kCalibration, saved.source_hash, saved.data_hash,
                                              bytes + "# a comment\n", path, dev);
  EXPECT_TRUE(commented.fresh);
  EXPECT_TRUE(commented.parsed);
  const Freshness other = check_freshness(SavedFit::kCalibration, "", "0000000000000000", bytes, path, dev);
  EXPECT_FALSE(other.fresh);
  EXPECT_NE(other.why.find("data hash 0000000000000000 does not match"), std::string::npos) << other.why;
}

}  // namespace
}  // namespace layoutx::costmodel
