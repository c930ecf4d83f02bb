// Calibration: synthetic recovery, the shipped calibration against its data, GELU findings.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "costmodel/calibration.h"
#include "costmodel/cost_model.h"
#include "costmodel/features.h"
#include "costmodel/op_level_predictor.h"
#include "costmodel/predictor_factory.h"
#include "costmodel/layer_features.h"
#include "costmodel/lowering.h"
#include "costmodel/nnls.h"
#include "model/builder.h"
#include "model/model_loader.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::costmodel {
namespace {

const std::string kConfigs = LAYOUTX_CONFIG_DIR;

DeviceSpec device() { return load_device(kConfigs + "/devices/galaxy-s25.yaml"); }
std::vector<MeasurementRecord> shipped() {
  return load_measurements(kConfigs + "/calibration/spark-s25-measurements.yaml");
}

TEST(Nnls, MatchesUnconstrainedWhenPositiveAndClampsOtherwise) {
  Eigen::MatrixXd A(3, 2);
  A << 1, 0, 0, 1, 1, 1;
  Eigen::VectorXd b(3);
  b << 1, 2, 3;  // exact solution x = (1, 2)
  Eigen::VectorXd x = nnls(A, b);
  EXPECT_NEAR(x[0], 1, 1e-12);
  EXPECT_NEAR(x[1], 2, 1e-12);
  b << -1, 2, 1;  // exact solution (-1, 2): x0 clamps to 0, x1 = (2 + 1) / 2
  x = nnls(A, b);
  EXPECT_EQ(x[0], 0);
  EXPECT_NEAR(x[1], 1.5, 1e-12);
}

// Timings generated from known coefficients over many variants are fitted back to them.
TEST(Calibration, SyntheticDataRecoversKnownCoefficients) {
  DeviceSpec dev = device();
  // Weak priors and bounds so that the data alone decides. The matrix-unit MAC terms of the
  // projections are not identifiable from layer timings: a decode projection's tile MACs
  // (32 N K) are a fixed multiple of its weight bytes, so they stay pinned to their priors.
  for (auto& k : dev.coefficients) {
    const bool collinear = k.name.rfind("matrix_unit_", 0) == 0;
    k.rel_sd = collinear ? 1e-6 : 1e3;
    k.min_value = 0;
  }
  // Known truth: each prior times a distinct factor in [0.5, 2.3].
  Eigen::VectorXd truth = prior_theta(dev);
  for (Eigen::Index k = 0; k < truth.size(); ++k)
    if (dev.coefficients[static_cast<size_t>(k)].rel_sd > 1) truth[k] *= 0.5 + 0.13 * static_cast<double>(k);
  std::vector<MeasurementRecord> recs;
  int id = 0;
  for (auto layer : {model::LayerType::kSliding, model::LayerType::kFull})
    for (int ctx : {1024, 4096, 16384})
      for (const char* layout : {"roll", "ring", "score-join"})
        for (const char* prec : {"fp16", "w8a16", "w4a16"})
          for (const char* gelu : {"erf", "tanh"}) {
            MeasurementRecord r;
            r.id = "syn" + std::to_string(id++);
            r.layer = layer;
            r.context = ctx;
            r.variant = model::parse_variant(layout, {std::string("precision=") + prec, std::string("gelu=") + gelu});
            r.sd = 1e-3;
            model::LayerGraph g = build_graph(r);
            const LayerFeatures lf = featurize_layer(g, dev);
            const std::vector<LoweredOp>& ops = lf.ops;
            const std::vector<OpFeatures>& fs = lf.op_features;
            r.ms = layer_design_row(dev, lf).dot(truth) / 1e3;
            recs.push_back(r);
            // Timings alone cannot split a per-precision constant (every fp16 erf layer has the
            // same weight bytes and the same GELU bytes): a GELU share per graph does, as in
            // the real data.
            if (ctx != 4096 || std::string(layout) != "ring") continue;
            MeasurementRecord s = r;
            s.kind = MeasurementRecord::Kind::kOpShare;
            s.id = "syn" + std::to_string(id++);
            s.ops = {"mlp/act"};
            s.sd = 1e-4;
            for (size_t i = 0; i < ops.size(); ++i)
              if (ops[i].name == "mlp/act") s.share = design_row(dev, fs[i]).dot(truth) / 1e3 / r.ms;
            recs.push_back(s);
          }
  Eigen::VectorXd fit = fit_coefficients(recs, dev);
  for (Eigen::Index k = 0; k < truth.size(); ++k)
    EXPECT_NEAR(fit[k] / truth[k], 1.0, 0.01) << dev.coefficients[static_cast<size_t>(k)].name;
}

class Shipped : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dev_ = new DeviceSpec(device());
    recs_ = new std::vector<MeasurementRecord>(shipped());
    rep_ = new FitReport(calibrate(*recs_, *dev_));
  }
  static void TearDownTestSuite() {
    delete rep_;
    delete recs_;
    delete dev_;
  }
  static DeviceSpec* dev_;
  static std::vector<MeasurementRecord>* recs_;
  static FitReport* rep_;
};
DeviceSpec* Shipped::dev_ = nullptr;
std::vector<MeasurementRecord>* Shipped::recs_ = nullptr;
FitReport* Shipped::rep_ = nullptr;

// The base spec is one hypothesis of the device among several (configs/devices/galaxy-s25.yaml,
// hypothesis_axes); the shipped model's in-sample tolerance is the combined one's
// (tests/costmodel/hypotheses_test.cc). Here: the base fit counts every record and fits each
// timing to a positive latency.
TEST_F(Shipped, FitsEveryRecord) {
  int timings = 0, shares = 0;
  for (const FitRow& r : rep_->rows) {
    if (r.record->kind == MeasurementRecord::Kind::kLayerTime) {
      ++timings;
      EXPECT_GT(r.fitted, 0) << r.record->id;
    } else {
      ++shares;
      EXPECT_GE(r.fitted, 0) << r.record->id;
    }
  }
  EXPECT_EQ(timings, 14);
  EXPECT_EQ(shares, 6);
}

TEST_F(Shipped, LeaveOneOutCoversEveryTiming) {
  ASSERT_EQ(rep_->loo.size(), 14u);
  for (const LooRow& l : rep_->loo) {
    EXPECT_GT(l.predicted_ms, 0) << l.record->id;
    EXPECT_DOUBLE_EQ(l.rel_error, (l.predicted_ms - l.measured_ms) / l.measured_ms);
  }
  EXPECT_LE(rep_->calibration.loo_median, rep_->calibration.loo_max);
}

TEST_F(Shipped, CoefficientsAreNonNegativeAndWeightsNoFasterThanDram) {
  for (size_t k = 0; k < dev_->coefficients.size(); ++k) {
    const double v = rep_->calibration.theta[static_cast<Eigen::Index>(k)];
    EXPECT_GE(v, 0) << dev_->coefficients[k].name;
    EXPECT_GE(v, dev_->coefficients[k].min_value * (1 - 1e-9)) << dev_->coefficients[k].name;
  }
}

TEST_F(Shipped, SavedCalibrationIsTheFitOfTheShippedData) {
  Calibration saved = load_calibration(kConfigs + "/calibration/galaxy-s25.calibration.yaml", *dev_);
  EXPECT_EQ(saved.data_hash, data_hash(*recs_, *dev_)) << "run `layoutx calibrate` after changing data or priors";
  for (Eigen::Index k = 0; k < saved.theta.size(); ++k)
    EXPECT_NEAR(saved.theta[k], rep_->calibration.theta[k], 1e-6 * (1 + std::fabs(saved.theta[k])));
}

TEST_F(Shipped, SaveLoadRoundTrip) {
  const std::string path = ::testing::TempDir() + "/roundtrip.calibration.yaml";
  save_calibration(rep_->calibration, rep_, path);
  Calibration back = load_calibration(path, *dev_);
  EXPECT_EQ(back.id, rep_->calibration.id);
  EXPECT_EQ(back.data_hash, rep_->calibration.data_hash);
  EXPECT_NEAR(back.model_rel_sd, rep_->calibration.model_rel_sd, 1e-8);
  EXPECT_TRUE(back.covariance.isApprox(rep_->calibration.covariance, 1e-6));
}

// The covariance is saved as its lower triangle; a file with every row whole (as older layoutx
// wrote them) reads as the same matrix; a row of another length is refused by name.
TEST_F(Shipped, CovarianceReadsAsLowerTriangleOrWhole) {
  const std::string doc = calibration_document(rep_->calibration, rep_);
  const Calibration& c = rep_->calibration;
  const size_t at = doc.find("covariance:");
  const size_t end = doc.find("\nloo:", at);
  ASSERT_NE(end, std::string::npos);
  std::string whole = "covariance:\n";
  for (Eigen::Index i = 0; i < c.covariance.rows(); ++i) {
    whole += "  - [";
    for (Eigen::Index j = 0; j < c.covariance.cols(); ++j) {
      char v[40];
      std::snprintf(v, sizeof v, "%.17g", c.covariance(i, j));
      whole += (j ? ", " : "") + std::string(v);
    }
    whole += "]\n";
  }
  const std::string old_doc = doc.substr(0, at) + whole + doc.substr(end + 1);
  const Calibration lower = parse_calibration(doc, "lower", *dev_);
  const Calibration full = parse_calibration(old_doc, "whole", *dev_);
  EXPECT_TRUE(lower.covariance.isApprox(c.covariance, 1e-6));
  EXPECT_EQ(full.covariance, c.covariance);
  EXPECT_EQ(lower.covariance, lower.covariance.transpose());
  std::string bad = doc;
  bad.replace(bad.find("  - [", at), 5, "  - [1, ");  // row 0 with two entries
  EXPECT_THROW(parse_calibration(bad, "bad", *dev_), Error);
}

// The predictor on the default configs (fresh calibration: says nothing on the log).
class Predicts : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::ostringstream log;
    p_ = load_default_predictor(log).release();
    log_ = new std::string(log.str());
    spec_ = new model::ModelSpec(model::load_model("spark-x2.5-1.7b"));
  }
  static void TearDownTestSuite() {
    delete p_;
    delete log_;
    delete spec_;
  }
  static Prediction run(model::LayerType t, int ctx, const std::string& layout, std::vector<std::string> sets = {}) {
    return p_->predict(model::build_layer_graph(spec_->layer(t, ctx), model::parse_variant(layout, sets)));
  }
  static double share(const Prediction& p, const std::string& op) {
    for (const auto& o : p.ops)
      if (o.name == op) return o.ms / p.latency_ms;
    return -1;
  }
  static OpLevelPredictor* p_;
  static std::string* log_;
  static model::ModelSpec* spec_;
};
OpLevelPredictor* Predicts::p_ = nullptr;
std::string* Predicts::log_ = nullptr;
model::ModelSpec* Predicts::spec_ = nullptr;

TEST_F(Predicts, DefaultCalibrationIsFresh) { EXPECT_EQ(*log_, ""); }

TEST_F(Predicts, OpsSumToLatencyAndIntervalBracketsIt) {
  Prediction p = run(model::LayerType::kFull, 8192, "ring", {"precision=w8a16"});
  double sum = 0;
  for (const auto& o : p.ops) sum += o.ms;
  EXPECT_NEAR(sum, p.latency_ms, 1e-9);
  EXPECT_LT(p.low_ms, p.latency_ms);
  EXPECT_GT(p.high_ms, p.latency_ms);
  EXPECT_GT(p.latency_ms, p.floor_ms);
  EXPECT_EQ(p.calibration_id, p_->calibration_id());
  EXPECT_EQ(p.calibration_id.size(), 8u);
}

TEST_F(Predicts, FloorIsWeightsAndBoundaryOverDram) {
  Prediction p = run(model::LayerType::kSliding, 4096, "ring", {"precision=w8a16"});
  // Weights: QKV 2048x3072, g_proj 2048x8, out 2048x2048, MLP 3 x 2048x6656 at 1 byte; norms 2 x 2048 u16.
  const double weights = 2048.0 * 3072 + 2048.0 * 8 + 2048.0 * 2048 + 3 * 2048.0 * 6656 + 2 * 2 * 2048.0;
  EXPECT_GT(p.floor_ms, weights / 84.8e9 * 1e3);
  EXPECT_LT(p.floor_ms, weights / 84.8e9 * 1e3 * 1.05);
}

TEST_F(Predicts, GeluShareAtFp16InTheMeasuredBand) {
  Prediction p = run(model::LayerType::kSliding, 4096, "score-join");
  EXPECT_GE(share(p, "mlp/act"), 0.11);
  EXPECT_LE(share(p, "mlp/act"), 0.13);
}

TEST_F(Predicts, TanhGeluSlowerThanErfBecauseTheCalibrationSaysSo) {
  Prediction erf = run(model::LayerType::kSliding, 4096, "score-join");
  Prediction tanh = run(model::LayerType::kSliding, 4096, "score-join", {"gelu=tanh"});
  EXPECT_GT(tanh.latency_ms, erf.latency_ms);
  // The priors of the two classes are equal: the ordering comes from the fit.
  const DeviceSpec& d = p_->device_spec();
  const int ie = d.index(OpClass::kGeluErf, model::Precision::kFp16, Term::kByte);
  const int it = d.index(OpClass::kGeluTanh, model::Precision::kFp16, Term::kByte);
  EXPECT_EQ(d.coefficients[static_cast<size_t>(ie)].prior, d.coefficients[static_cast<size_t>(it)].prior);
  EXPECT_GT(p_->calibration().theta[it], p_->calibration().theta[ie]);
}


// The default predictor on a copy of the configs whose measurement file `edit` changes; returns
// what it wrote on its log and the calibration id it predicts with.
std::pair<std::string, std::string> load_with_edited_measurements(const std::string& name,
                                                                  const std::function<void(std::string&)>& edit) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("configs-" + name);
  fs::remove_all(dir);
  fs::copy(kConfigs, dir, fs::copy_options::recursive);
  const fs::path data = dir / "calibration/spark-s25-measurements.yaml";
  std::string text = read_text_file(data.string());
  edit(text);
  std::ofstream(data, std::ios::binary) << text;
  const char* old = std::getenv("LAYOUTX_CONFIGS");
  const std::string saved = old ? old : "";
  setenv("LAYOUTX_CONFIGS", dir.c_str(), 1);
  std::ostringstream log;
  auto p = load_default_predictor(log);
  if (old) setenv("LAYOUTX_CONFIGS", saved.c_str(), 1);
  else unsetenv("LAYOUTX_CONFIGS");
  return {log.str(), p->calibration_id()};
}

// The shipped calibration records the bytes it was fitted on, so loading it need not parse the
// measurements; an edit that keeps the records (a comment) still finds it fresh; an edit of a
// figure makes the loader refit and say so.
TEST(Freshness, SourceHashSkipsParsingAndDataHashStillDecides) {
  const DeviceSpec dev = device();
  const Calibration saved = load_calibration(kConfigs + "/calibration/galaxy-s25.calibration.yaml", dev);
  EXPECT_EQ(saved.source_hash,
            source_hash({read_text_file(kConfigs + "/calibration/spark-s25-measurements.yaml")}, dev))
      << "run `layoutx calibrate` after changing the measurement file";

  auto [log_comment, id_comment] = load_with_edited_measurements("comment", [](std::string& t) { t += "# a note\n"; });
  EXPECT_EQ(log_comment, "");
  EXPECT_EQ(id_comment, saved.id);

  auto [log_figure, id_figure] = load_with_edited_measurements("figure", [](std::string& t) {
    const std::string from = "precision: fp16}, ms: 1.689,", to = "precision: fp16}, ms: 1.889,";
    ASSERT_NE(t.find(from), std::string::npos);
    t.replace(t.find(from), from.size(), to);
  });
  EXPECT_NE(log_figure.find("does not match the measurements"), std::string::npos) << log_figure;
  EXPECT_NE(id_figure, saved.id);
}

}  // namespace
}  // namespace layoutx::costmodel
