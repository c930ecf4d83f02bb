// Hypotheses: the weights, the mixture, the live set, the combined fit of the shipped data,
// and the saved hypothesis calibration.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "costmodel/calibration_report.h"
#include "costmodel/hypothesis_fit.h"
#include "costmodel/hypothesis_predictor.h"
#include "costmodel/mixture.h"
#include "costmodel/predictor_factory.h"
#include "costmodel/hypotheses_document.h"
#include "costmodel/layer_features.h"
#include "costmodel/live_set.h"
#include "costmodel/measurements.h"
#include "costmodel/op_level_predictor.h"
#include "costmodel/op_profile_shares.h"
#include "model/builder.h"
#include "support/error.h"
#include "model/model_loader.h"
#include "tests/temp_dir.h"

namespace layoutx::costmodel {
namespace {

const std::string kConfigs = LAYOUTX_CONFIG_DIR;

TEST(PseudoBma, EqualDensitiesShareAndADominatedHypothesisGetsLittle) {
  const std::vector<double> a = {-1.0, -2.0, -0.5, -1.5};
  std::vector<double> w = pseudo_bma_plus_weights({a, a});
  EXPECT_NEAR(w[0], 0.5, 1e-12);
  EXPECT_NEAR(w[1], 0.5, 1e-12);
  std::vector<double> worse = a;
  for (double& x : worse) x -= 5;  // 5 nats worse at every timing
  w = pseudo_bma_plus_weights({a, worse});
  EXPECT_GT(w[0], 0.999);
  EXPECT_NEAR(w[0] + w[1], 1.0, 1e-12);
}

// An op-level profile tells structures apart: a profile of the full ring at w4a16, ctx 4096,
// as the roofline-dma hypothesis prices its ops' busy time (a profile's cycles are busy time, not
// critical path: costmodel/overlap.h), adds op shares the other hypotheses predict worse, so the
// weight moves toward roofline-dma (the shares count in each hypothesis's elpd, not only in its
// coefficients).
TEST(HypothesisWeights, AnOpLevelProfileMovesThemTowardTheStructureThatPredictsIt) {
  const DeviceSpec dev = load_device_named("galaxy-s25");
  std::vector<MeasurementRecord> records = load_measurements(device_file(dev.calibration.measurements));
  const std::string kTruth = "stall-2mb/w4-expanded/roofline-dma/softmax-fused/cache-in-place/chains-serial";
  // The truth's family: the members the profile cannot tell from it (the softmax forms and the
  // 2 / 2.5 MiB knees price this graph alike).
  auto truth_weight = [&](const HypothesisSet& set) {
    double w = 0;
    for (const auto& f : set.fits)
      w += f.spec.name.find("/w4-expanded/roofline-dma/") != std::string::npos &&
                   f.spec.name.find("cache-in-place") != std::string::npos
               ? f.weight
               : 0.0;
    return w;
  };
  const HypothesisSet before = fit_hypotheses(records, dev);
  const HypothesisFit* truth = nullptr;
  for (const auto& f : before.fits)
    if (f.spec.name == kTruth) truth = &f;
  ASSERT_NE(truth, nullptr);
  MeasurementRecord graph;
  graph.layer = model::LayerType::kFull;
  graph.context = 4096;
  graph.variant = model::parse_variant("ring", {"precision=w4a16"});
  DeviceSpec busy = truth->device;  // the same coefficients, every op at its own time
  busy.structure.set(Switch::kOverlap, 0);
  const Prediction p = OpLevelPredictor(busy, truth->report.calibration, RuleSet{}).predict(build_graph(graph));
  std::vector<ProfiledOp> rows;
  for (const OpCost& op : p.ops) rows.push_back({op.name, op.ms});
  const OpProfileShares shares = shares_from_op_profile(graph, rows, "profile", "test", 0.02);
  ASSERT_GE(shares.shares.size(), 3u);
  records.insert(records.end(), shares.shares.begin(), shares.shares.end());
  const HypothesisSet after = fit_hypotheses(records, dev);
  EXPECT_GT(truth_weight(after), 2 * truth_weight(before) + 0.01)
      << kTruth << " weight " << truth_weight(before) << " -> " << truth_weight(after);
}

TEST(Mixture, IncludesTheSpreadBetweenComponents) {
  // Two hypotheses agreeing on the sd but not on the sign: the mixture's sd exceeds both.
  Mixture m = mix({0.5, 0.5}, {1.0, -1.0}, {0.1, 0.1});
  EXPECT_NEAR(m.mean, 0.0, 1e-12);
  EXPECT_NEAR(m.sd, std::sqrt(0.01 + 1.0), 1e-12);
  m = mix({1.0, 0.0}, {2.0, 7.0}, {0.3, 5.0});
  EXPECT_NEAR(m.mean, 2.0, 1e-12);
  EXPECT_NEAR(m.sd, 0.3, 1e-12);
}

// Hypotheses that disagree on which of two variants is faster: the probability the explorer
// decides by is the mixture's own (the weight of the members that say so, each certain here),
// not a normal with the mixture's mean and spread, which would call a 7% dissent decided.
TEST(Mixture, ProbabilityFasterIsTheWeightOfTheMembersThatSaySo) {
  const DeviceSpec dev = load_device_named("galaxy-s25");
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  const model::LayerSpec layer = m.layer(model::LayerType::kSliding, 4096);
  const model::LayerGraph with_erf = model::build_layer_graph(layer, model::parse_variant("ring", {"precision=fp16"}));
  const model::LayerGraph with_tanh =
      model::build_layer_graph(layer, model::parse_variant("ring", {"precision=fp16", "gelu=tanh"}));
  auto coefficient = [&](const std::string& name) {
    for (size_t i = 0; i < dev.coefficients.size(); ++i)
      if (dev.coefficients[i].name == name) return static_cast<Eigen::Index>(i);
    ADD_FAILURE() << name;
    return Eigen::Index(0);
  };
  // A member at the priors (no uncertainty) that prices one GELU form 20x the other.
  auto member = [&](const char* slow) {
    Calibration c = prior_calibration(dev);
    c.theta[coefficient(slow)] *= 20;
    c.id = slow;
    return std::make_unique<OpLevelPredictor>(dev, c, RuleSet{});
  };
  std::vector<std::unique_ptr<OpLevelPredictor>> members;
  members.push_back(member("gelu_erf_fp16"));   // says tanh is faster
  members.push_back(member("gelu_tanh_fp16"));  // says erf is faster
  const HypothesisPredictor pr({"erf-slow", "tanh-slow"}, {0.93, 0.07}, std::move(members));
  const Prediction a = pr.predict(with_erf), b = pr.predict(with_tanh);
  EXPECT_NEAR(pr.probability_faster(a, b), 0.07, 1e-9);
  EXPECT_NEAR(pr.probability_faster(b, a), 0.93, 1e-9);
  // The normal approximation of the same mixture puts erf's chance below the 5% tail.
  EXPECT_LT(pr.Predictor::probability_faster(a, b), 0.05);
}

TEST(KendallTau, OrderAgreement) {
  EXPECT_NEAR(kendall_tau({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0, 1e-12);
  EXPECT_NEAR(kendall_tau({1, 2, 3, 4}, {40, 30, 20, 10}), -1.0, 1e-12);
  EXPECT_NEAR(kendall_tau({1, 2, 3}, {1, 3, 2}), 1.0 / 3.0, 1e-12);
}

// The live set of a full layer: the cache enters, is concatenated with the new entry, and (in
// quantized graphs) converted to 16-bit fixed point first, so a converted copy lives beside
// the concatenated one (htp-facts.md, "What the calibration data itself shows").
TEST(LiveSet, QuantizedGraphsHoldAConvertedCopyOfTheCache) {
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  auto peak = [&](int ctx, const char* precision) {
    auto g = model::build_layer_graph(m.layer(model::LayerType::kFull, ctx),
                                      model::parse_variant("ring", {std::string("precision=") + precision}));
    return live_set(g, 32, 64 * 1024).peak_bytes;
  };
  // K at 1k, f16, 2 kv heads x 256 dims x 1023 entries, the entry axis tiled to 1024 (the
  // channel pad of 32): 1 MiB, as is the concatenated K.
  const int64_t k_cache = 2 * 256 * 1024 * 2, k_all = 2 * 256 * 1024 * 2;
  EXPECT_EQ(peak(1024, "fp16"), k_cache + k_all);          // K in and K concatenated, at the concat
  const int64_t v_cache = 2 * 1023 * 256 * 2;              // [kv, N, D]: D is the tiled axis
  EXPECT_EQ(peak(1024, "w8a16"), k_cache + k_all + v_cache);  // converted K, concatenated K, and V waiting
  EXPECT_GT(peak(4096, "fp16"), 4 * (k_cache + k_all) - 1);
}

// Under cache-relaid the re-laid copy of a cache input is a cache-sized tensor too: alive beside
// the flat input at the relayout, alone after it.
TEST(LiveSet, ARelaidCacheInputsTiledCopyIsLiveFromItsRelayout) {
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  auto g = model::build_layer_graph(m.layer(model::LayerType::kFull, 1024),
                                    model::parse_variant("score-join", {"precision=fp16"}));
  const auto relaid = cache_inputs_read_in_place(g, 32, 64);
  ASSERT_EQ(relaid.size(), 2u);  // K and V, each read by a MatMul
  const LiveSet flat = live_set(g, 32, 64 * 1024), tiled = live_set(g, 32, 64 * 1024, relaid);
  // K [2, 256, 1023] (1 MiB as above) and V [2, 1023, 256] (2 x 1023 x 256 x 2 bytes).
  const int64_t cache_bytes[] = {2 * 256 * 1024 * 2, 2 * 1023 * 256 * 2};
  for (size_t i = 0; i < relaid.size(); ++i) {
    const auto readers = g.users(relaid[i]);
    ASSERT_EQ(readers.size(), 1u);
    // At the relayout (its reader), the flat input and its tiled copy: one cache more.
    EXPECT_EQ(tiled.live_bytes[readers.front()], flat.live_bytes[readers.front()] + cache_bytes[i])
        << g.op(relaid[i]).name;
  }
  EXPECT_GE(tiled.peak_bytes, flat.peak_bytes);
  EXPECT_EQ(live_set(g, 32, 64 * 1024, {}).peak_bytes, flat.peak_bytes);
}

// Hypothesis cache-relaid: a cache input that a non-copy op reads directly (score-join's MatMuls
// on the f16 cache) pays one re-layout copy; where a Concat or a quantizing Convert copies the
// cache first (roll/ring; every quantized graph), nothing is added.
TEST(CacheRelayout, OnlyCacheInputsReadInPlaceAreRelaid) {
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  DeviceSpec dev = load_device(kConfigs + "/devices/galaxy-s25.yaml");
  auto relayouts = [&](const char* layout, const char* precision, bool relaid) {
    auto g = model::build_layer_graph(m.layer(model::LayerType::kFull, 1024),
                                      model::parse_variant(layout, {std::string("precision=") + precision}));
    dev.structure.set(Switch::kRelayoutCacheInputs, relaid);
    const LayerFeatures f = featurize_layer(g, dev);
    std::vector<std::pair<std::string, double>> out;
    for (size_t i = 0; i < f.ops.size(); ++i)
      if (f.ops[i].name.find("/relayout") != std::string::npos) out.emplace_back(f.ops[i].name, f.op_features[i].bytes);
    return out;
  };
  const auto sj = relayouts("score-join", "fp16", true);
  ASSERT_EQ(sj.size(), 2u);
  // K [kv 2, 256, 1023] f16, its last axis tiled to 1024: read flat and written tiled.
  EXPECT_EQ(sj[0].second, 2.0 * (2 * 256 * 1024 * 2));
  EXPECT_TRUE(relayouts("score-join", "fp16", false).empty());
  EXPECT_TRUE(relayouts("ring", "fp16", true).empty());
  EXPECT_TRUE(relayouts("score-join", "w8a16", true).empty());
}

class Combined : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dev_ = new DeviceSpec(load_device(kConfigs + "/devices/galaxy-s25.yaml"));
    recs_ = new std::vector<MeasurementRecord>(load_measurements(kConfigs + "/calibration/spark-s25-measurements.yaml"));
    set_ = new HypothesisSet(fit_hypotheses(*recs_, *dev_));
    rep_ = new CalibrationReport(calibration_report(*set_, *recs_, *dev_));
  }
  static void TearDownTestSuite() {
    delete rep_;
    delete set_;
    delete recs_;
    delete dev_;
  }
  static DeviceSpec* dev_;
  static std::vector<MeasurementRecord>* recs_;
  static HypothesisSet* set_;
  static CalibrationReport* rep_;
};
DeviceSpec* Combined::dev_ = nullptr;
std::vector<MeasurementRecord>* Combined::recs_ = nullptr;
HypothesisSet* Combined::set_ = nullptr;
CalibrationReport* Combined::rep_ = nullptr;

TEST_F(Combined, EveryHypothesisOfTheProductIsFittedAndTheWeightsSumToOne) {
  size_t product = 1;
  EXPECT_EQ(set_->fits.size(), dev_->hypotheses.size());
  double total = 0;
  for (const HypothesisFit& f : set_->fits) {
    EXPECT_GE(f.weight, 0) << f.spec.name;
    EXPECT_EQ(f.loo.lpd.size(), 14u) << f.spec.name;
    total += f.weight;
  }
  EXPECT_NEAR(total, 1.0, 1e-9);
  EXPECT_GT(set_->fits.size(), product);
}

// What `calibrate --db` stores reads back as the same mixture: same members, weights and id,
// the same figure; a document naming a hypothesis the device lacks is refused by name.
TEST_F(Combined, TheStoredHypothesesDocumentReadsBackAsTheSamePredictor) {
  const RuleSet rules = load_device_rules(*dev_);
  const auto direct = make_predictor(*set_, rules);
  const std::string doc = hypotheses_document(*set_);
  ASSERT_TRUE(is_hypotheses_document(doc));
  EXPECT_FALSE(is_hypotheses_document(calibration_document(set_->fits[0].report.calibration, nullptr)));
  const auto back = parse_hypotheses_document(doc, "db", *dev_, rules);
  EXPECT_EQ(back->calibration_id(), direct->calibration_id());
  EXPECT_EQ(back->size(), direct->size());
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  const auto g = model::build_layer_graph(m.layer(model::LayerType::kSliding, 4096), model::parse_variant("ring", {"precision=w4a16"}));
  EXPECT_NEAR(back->predict(g).latency_ms, direct->predict(g).latency_ms, 1e-6);  // the document keeps 9 digits
  std::string bad = doc;
  bad.replace(bad.find("name: \"") + 7, 5, "nope-");
  try {
    parse_hypotheses_document(bad, "db", *dev_, rules);
    ADD_FAILURE() << "an unknown hypothesis was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("db: members[0].name: 'nope-"), std::string::npos) << e.what();
  }
}

// Saving writes one file: the kept hypotheses, a member fitted identically to an earlier one
// naming it instead of repeating its calibration; it loads back as the same predictor.
TEST_F(Combined, SavingWritesTheKeptHypothesesInOneFile) {
  test::TempDir dir("hyp-save");
  const std::string path = dir / "d.hypotheses.yaml";
  save_hypotheses(*set_, "src", path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const auto direct = make_predictor(*set_, RuleSet{});
  ASSERT_GE(direct->size(), 2u);
  size_t calibrations = 0, twins = 0;
  for (size_t at = s.find("\n    calibration: |"); at != std::string::npos; at = s.find("\n    calibration: |", at + 1)) ++calibrations;
  for (size_t at = s.find("same_calibration_as:"); at != std::string::npos; at = s.find("same_calibration_as:", at + 1)) ++twins;
  EXPECT_EQ(calibrations + twins, direct->size());
  EXPECT_GT(twins, 0u);  // softmax-fused and -as-written fit identically on these data
  const std::string src = "src";
  const auto back = parse_hypotheses_document(s, path, *dev_, RuleSet{}, &src);
  EXPECT_EQ(back->calibration_id(), direct->calibration_id());
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  const auto g = model::build_layer_graph(m.layer(model::LayerType::kFull, 1024), model::parse_variant("score-join", {"precision=fp16"}));
  EXPECT_NEAR(back->predict(g).latency_ms, direct->predict(g).latency_ms, 1e-6);
  const std::string other = "other";
  EXPECT_THROW(parse_hypotheses_document(s, path, *dev_, RuleSet{}, &other), Error);
  // A reference to a member that is not before it is refused by position.
  std::string bad = s;
  const size_t ref = bad.find("same_calibration_as: \"");
  ASSERT_NE(ref, std::string::npos);
  bad.insert(ref + 22, "x");
  try {
    parse_hypotheses_document(bad, path, *dev_, RuleSet{});
    ADD_FAILURE() << "a reference to no earlier member was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(".same_calibration_as: 'x"), std::string::npos) << e.what();
  }
}

// The mixture's per-op list: an op only some hypotheses have (cache-relaid's relayouts) sits
// where those hypotheses put it, before the op that reads the cache, and the list still sums to
// the latency.
TEST_F(Combined, AnOpOnlySomeHypothesesHaveIsListedInItsPlace) {
  const auto pr = make_predictor(*set_, RuleSet{}, 1.0);
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  const auto g = model::build_layer_graph(m.layer(model::LayerType::kFull, 1024),
                                          model::parse_variant("score-join", {"precision=fp16"}));
  const Prediction p = pr->predict(g);
  auto index_of = [&](const std::string& name) {
    for (size_t i = 0; i < p.ops.size(); ++i)
      if (p.ops[i].name == name) return static_cast<int>(i);
    return -1;
  };
  const int relayout = index_of("in/k_cache/relayout");
  ASSERT_GE(relayout, 0);
  EXPECT_STREQ(p.ops[static_cast<size_t>(relayout)].kind, "Relayout");
  EXPECT_EQ(relayout + 1, index_of("attn/scores_cache"));
  EXPECT_EQ(index_of("in/v_cache/relayout") + 1, index_of("attn/context_cache"));
  double sum = 0;
  for (const OpCost& c : p.ops) sum += c.ms;
  EXPECT_NEAR(sum, p.latency_ms, 1e-9);
}

// The featurization cache (costmodel/featurization_cache.h) is exact: switched off, every member
// featurizes and is priced on its own, and the mixture's figure, interval, row, ops and legality
// agree with the shared path for every hypothesis on graphs where the switches matter (w4a16
// weights, an explicit softmax, caches read in place, live sets across the knees).
TEST_F(Combined, TheFeaturizationCacheSwitchedOffPredictsTheSame) {
  auto shared = make_predictor(*set_, RuleSet{}, 1.0);
  auto alone = make_predictor(*set_, RuleSet{}, 1.0);
  alone->share_featurizations(false);
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  for (const char* layout : {"ring", "roll", "score-join"})
    for (const char* precision : {"precision=fp16", "precision=w4a16"})
      for (int ctx : {768, 4096}) {
        const auto g = model::build_layer_graph(m.layer(model::LayerType::kFull, ctx),
                                                model::parse_variant(layout, {precision, "softmax=explicit"}));
        const Prediction a = shared->predict(g), b = alone->predict(g);
        const std::string at = std::string(layout) + " " + precision + " " + std::to_string(ctx);
        EXPECT_NEAR(a.latency_ms, b.latency_ms, 1e-12 * a.latency_ms) << at;
        EXPECT_NEAR(a.high_ms, b.high_ms, 1e-9 * a.high_ms) << at;
        ASSERT_EQ(a.design_row.size(), b.design_row.size()) << at;
        for (size_t i = 0; i < a.design_row.size(); ++i) EXPECT_DOUBLE_EQ(a.design_row[i], b.design_row[i]) << at << " " << i;
        ASSERT_EQ(a.ops.size(), b.ops.size()) << at;
        for (size_t i = 0; i < a.ops.size(); ++i) {
          EXPECT_EQ(a.ops[i].name, b.ops[i].name) << at;
          EXPECT_NEAR(a.ops[i].ms, b.ops[i].ms, 1e-12 * a.latency_ms) << at << " " << a.ops[i].name;
        }
        EXPECT_EQ(a.legality.reasons, b.legality.reasons) << at;
      }
}

// Hypotheses that differ only in the VTCM knee share one featurization per graph and apply their
// own knee (HypothesisPredictor::predict): the mixture's figure is still exactly the weighted
// mean of the members' own predictions, below, between and above the knees. Between them
// (w4a16 full layers at ctx 768: 2.25 MiB live) the 2 and 2.5 MiB knees disagree, and the
// interval holds both readings.
TEST_F(Combined, KneesSharingAFeaturizationPredictAsTheirMembers) {
  const auto pr = make_predictor(*set_, RuleSet{});
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  for (int ctx : {640, 768, 1024, 4096}) {
    const auto g = model::build_layer_graph(m.layer(model::LayerType::kFull, ctx),
                                            model::parse_variant("ring", {"precision=w4a16"}));
    const Prediction p = pr->predict(g);
    double mean = 0, lo = 1e9, hi = 0;
    const auto each = pr->predict_each(g);
    for (const HypothesisFigure& f : each) {
      mean += f.weight * f.prediction.latency_ms;
      lo = std::min(lo, f.prediction.latency_ms);
      hi = std::max(hi, f.prediction.latency_ms);
    }
    EXPECT_NEAR(p.latency_ms, mean, 1e-9) << ctx;
    EXPECT_LT(p.low_ms, p.latency_ms);
    EXPECT_GT(p.high_ms, p.latency_ms);
    // Members that differ only in the knee (stall-2mb/X and stall-2.5mb/X): apart at 768 only.
    double knee_gap = 0;
    int pairs = 0;
    for (const HypothesisFigure& a : each)
      for (const HypothesisFigure& b : each)
        if (a.name.rfind("stall-2mb/", 0) == 0 && b.name == "stall-2.5mb/" + a.name.substr(10)) {
          knee_gap = std::max(knee_gap, std::abs(a.prediction.latency_ms - b.prediction.latency_ms));
          ++pairs;
        }
    ASSERT_GT(pairs, 0) << ctx;
    if (ctx == 768) EXPECT_GT(knee_gap, 0.2) << "a stall past 2 MiB but not past 2.5 MiB";
    else EXPECT_LT(knee_gap, 0.02) << ctx << ": both knees on the same side";
    if (ctx == 768) {
      EXPECT_LT(p.low_ms, lo + knee_gap) << "the interval holds both readings of the knee";
      EXPECT_GT(p.high_ms, lo + knee_gap);
    }
  }
}

// The combined predictor featurizes a graph once per structure that matters to it (and lowers it
// once for structures that differ only in re-laying the cache): every member's slice of the
// combined design row is the row the member computes alone, and the latency is their weighted
// mean, for forms that read the cache in place (score-join), fold or not (explicit softmax), and
// sit between the knees (ctx 768).
TEST_F(Combined, EveryFormPredictsAsItsMembersAlone) {
  const auto pr = make_predictor(*set_, RuleSet{});
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  const std::vector<std::pair<const char*, std::vector<std::string>>> forms = {
      {"roll", {}}, {"ring", {}}, {"score-join", {}}, {"score-join", {"softmax=explicit"}},
      {"score-join", {"new_score=mul_reducesum"}}, {"ring", {"gelu=tanh"}}};
  int compared = 0;
  for (const char* precision : {"precision=fp16", "precision=w8a16", "precision=w4a16"})
    for (const auto& [preset, sets] : forms)
      for (auto type : {model::LayerType::kSliding, model::LayerType::kFull})
        for (int ctx : {768, 4096}) {
          std::vector<std::string> all = sets;
          all.push_back(precision);
          const auto g = model::build_layer_graph(m.layer(type, ctx), model::parse_variant(preset, all));
          const Prediction p = pr->predict(g);
          const std::vector<HypothesisFigure> each = pr->predict_each(g);
          double mean = 0;
          size_t at = 0;
          for (const HypothesisFigure& f : each) {
            mean += f.weight * f.prediction.latency_ms;
            const std::vector<double>& row = f.prediction.design_row;
            ASSERT_LE(at + row.size(), p.design_row.size());
            for (size_t i = 0; i < row.size(); ++i)
              EXPECT_NEAR(p.design_row[at + i], row[i], 1e-9 * std::max(1.0, std::abs(row[i])))
                  << g.variant.key() << " ctx " << ctx << " " << f.name << " coefficient " << i;
            at += row.size();
          }
          EXPECT_EQ(at, p.design_row.size());
          EXPECT_NEAR(p.latency_ms, mean, 1e-9) << g.variant.key() << " ctx " << ctx;
          ++compared;
        }
  EXPECT_EQ(compared, 72);
}

// Stated tolerance of the shipped (combined) model, in-sample: every timing within 3 sd (the
// issue's target; the timing sd is 2%).
TEST_F(Combined, InSampleEveryTimingWithinThreeSd) {
  EXPECT_LT(rep_->combined.max_abs_resid_sd, 3.0);
}

TEST_F(Combined, HeldOutFiguresAreComputedForEveryTiming) {
  EXPECT_EQ(rep_->combined.loo.count, 14);
  EXPECT_EQ(rep_->combined.group_loo.count, 14);
  ASSERT_EQ(rep_->replays.size(), 2u);                // the data's exports are 1, 2 and 3
  EXPECT_EQ(rep_->replays[0].predicted_export, 2);
  EXPECT_EQ(rep_->replays[0].rows.size(), 3u);        // the second export's three timings
  EXPECT_EQ(rep_->replays[0].trained_on.size(), 9u);  // fitted on the first export's nine
  EXPECT_EQ(rep_->replays[0].differences.size(), 3u);
  EXPECT_EQ(rep_->replays[1].predicted_export, 3);
  EXPECT_EQ(rep_->replays[1].rows.size(), 2u);         // the third export's two ring timings
  EXPECT_EQ(rep_->replays[1].trained_on.size(), 12u);  // fitted on the first two exports' twelve
  EXPECT_EQ(rep_->replays[1].differences.size(), 2u);
  for (size_t i = 0; i < rep_->loo_ms.size(); ++i) {
    EXPECT_LE(rep_->loo_low_ms[i], rep_->loo_ms[i]);
    EXPECT_GE(rep_->loo_high_ms[i], rep_->loo_ms[i]);
  }
}

// A saved file fitted on other data (or another device spec) is not used: the shipped predictor
// says why and refits in memory.
TEST(SavedHypotheses, AStaleFileIsRefitted) {
  DeviceSpec dev = load_device_named("galaxy-s25");
  test::TempDir dir("hyp-stale");
  std::ifstream in(device_file(dev.calibration.hypotheses));
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const size_t at = s.find("source_hash: \"");
  ASSERT_NE(at, std::string::npos);
  s[at + 14] = s[at + 14] == '0' ? '1' : '0';  // the hash's first hex digit
  std::ofstream(dir / "h.yaml") << s;
  dev.calibration.hypotheses = dir / "h.yaml";
  std::ostringstream log;
  bool refitted = false;
  load_shipped_hypothesis_predictor(dev, log, &refitted);
  EXPECT_TRUE(refitted);
  EXPECT_NE(log.str().find("h.yaml: source_hash: '"), std::string::npos) << log.str();
}

TEST(SavedHypotheses, FreshAndEqualToTheFit) {
  std::ostringstream log;
  auto pr = load_default_hypothesis_predictor(log);
  EXPECT_EQ(log.str(), "") << "run `layoutx calibrate` after changing data, priors or hypotheses";
  double total = 0;
  for (double w : pr->weights()) total += w;
  EXPECT_NEAR(total, 1.0, 1e-12);
  // A prediction's ops sum to its latency; the cached row reproduces it; its interval brackets it.
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  auto g = model::build_layer_graph(m.layer(model::LayerType::kFull, 4096), model::parse_variant("ring", {"precision=w4a16"}));
  Prediction p = pr->predict(g);
  double sum = 0;
  for (const OpCost& c : p.ops) sum += c.ms;
  EXPECT_NEAR(sum, p.latency_ms, 1e-9);
  EXPECT_NEAR(pr->latency_from_row(p.design_row), p.latency_ms, 1e-9);
  EXPECT_LT(p.low_ms, p.latency_ms);
  EXPECT_GT(p.high_ms, p.latency_ms);
  EXPECT_NEAR(pr->difference_half_width_ms(p, p), 0.0, 1e-12);
}

// A featurization's rows (layer_rows) are the layer's design row bit for bit, and a member priced
// from rows another member of its layout computed gives exactly its own price: what lets the
// mixture compute them once per featurization and layout (issue 33). A spec with a coefficient
// dropped is another layout.
TEST(SavedHypotheses, SharedLayerRowsPriceEachMemberExactlyAsItsOwn) {
  std::ostringstream log;
  auto pr = load_default_hypothesis_predictor(log);
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  size_t shared = 0;
  for (const char* layout : {"ring", "roll", "score-join"})
    for (const char* precision : {"precision=fp16", "precision=w4a16"})
      for (auto t : {model::LayerType::kSliding, model::LayerType::kFull}) {
        const auto g = model::build_layer_graph(m.layer(t, 4096), model::parse_variant(layout, {precision, "softmax=explicit"}));
        for (size_t h = 0; h < pr->size(); ++h) {
          const OpLevelPredictor& me = pr->member(h);
          const LayerFeatures lf = featurize_layer(g, me.device_spec());
          const Eigen::VectorXd row = layer_design_row(me.device_spec(), lf);
          const std::string at = std::string(layout) + " " + precision + " member " + std::to_string(h);
          for (size_t j = 0; j < pr->size(); ++j) {
            if (!same_coefficient_layout(pr->member(j).device_spec(), me.device_spec())) continue;
            const LayerRows rows = layer_rows(pr->member(j).device_spec(), lf);
            ASSERT_EQ(rows.raw_row.size(), row.size()) << at;
            for (Eigen::Index i = 0; i < row.size(); ++i) EXPECT_EQ(rows.raw_row[i], row[i]) << at << " " << i;
            const Prediction a = me.price(lf, rows), b = me.price(lf);
            EXPECT_EQ(a.latency_ms, b.latency_ms) << at;
            EXPECT_EQ(a.high_ms, b.high_ms) << at;
            EXPECT_EQ(a.design_row, b.design_row) << at;
            ASSERT_EQ(a.ops.size(), b.ops.size()) << at;
            for (size_t i = 0; i < a.ops.size(); ++i) EXPECT_EQ(a.ops[i].ms, b.ops[i].ms) << at << " " << a.ops[i].name;
            shared += j != h;
          }
        }
      }
  EXPECT_GT(shared, 0u);  // the shipped mixture has members of one layout
  DeviceSpec fewer = pr->member(0).device_spec();
  fewer.coefficients.pop_back();
  fewer.build_index();
  EXPECT_TRUE(same_coefficient_layout(pr->member(0).device_spec(), pr->member(0).device_spec()));
  EXPECT_FALSE(same_coefficient_layout(pr->member(0).device_spec(), fewer));
}

}  // namespace
}  // namespace layoutx::costmodel

namespace layoutx::costmodel {
namespace {

// The CPU device has hypotheses of its own (ONNX Runtime's GELU fusion, output aliasing), none of
// the HTP's. Timings generated by one of them at its priors move the weight toward it where the
// timings can see the difference, and leave it split where they cannot.
TEST(CpuHypotheses, TimingsFromOneStructureWeighItWhereTheyCanSeeIt) {
  const DeviceSpec dev = load_device_named("onnxruntime-cpu");
  ASSERT_EQ(dev.hypotheses.size(), 4u);
  for (const HypothesisSpec& h : dev.hypotheses) {
    EXPECT_EQ(h.name.find("vtcm"), std::string::npos) << h.name;
    EXPECT_EQ(h.name.find("softmax"), std::string::npos) << h.name;
  }
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  std::vector<model::LayerGraph> graphs;
  const std::vector<std::pair<const char*, std::vector<std::string>>> forms = {
      {"roll", {}}, {"ring", {}}, {"score-join", {}}, {"ring", {"gelu=tanh"}}, {"roll", {"gelu=tanh"}}};
  for (const auto& [preset, sets] : forms) {
    graphs.push_back(model::build_layer_graph(m.layer(model::LayerType::kSliding, 4096), model::parse_variant(preset, sets)));
    for (int ctx : {1024, 4096})
      graphs.push_back(model::build_layer_graph(m.layer(model::LayerType::kFull, ctx), model::parse_variant(preset, sets)));
  }
  for (size_t truth = 0; truth < dev.hypotheses.size(); ++truth) {
    const DeviceSpec d = with_hypothesis(dev, dev.hypotheses[truth]);
    const OpLevelPredictor generator(d, prior_calibration(d), RuleSet{});
    std::vector<MeasurementRecord> records;
    for (const model::LayerGraph& g : graphs) {
      MeasurementRecord r;
      r.kind = MeasurementRecord::Kind::kLayerTime;
      r.id = g.variant.key() + "-" + std::to_string(records.size());
      r.model = "spark-x2.5-1.7b";
      r.layer = g.layer.type;
      r.context = g.layer.context;
      r.variant = g.variant;
      r.ms = generator.predict(g).latency_ms;
      r.sd = 0.02;
      records.push_back(r);
    }
    const HypothesisSet set = fit_hypotheses(records, dev);
    // The weight of each axis's true option, summed over the other axis.
    const std::string& name = dev.hypotheses[truth].name;
    const std::string gelu = name.substr(0, name.find('/')), output = name.substr(name.find('/') + 1);
    double w_gelu = 0, w_output = 0;
    for (const HypothesisFit& f : set.fits) {
      if (f.spec.name.rfind(gelu + "/", 0) == 0) w_gelu += f.weight;
      if (f.spec.name.size() > output.size() && f.spec.name.compare(f.spec.name.size() - output.size(), output.size(), output) == 0)
        w_output += f.weight;
    }
    // Outputs are a visible share of a CPU layer (roll returns its whole window): told apart.
    EXPECT_GT(w_output, 0.7) << name;
    // The GELU is under 1% of a CPU layer's time: layer timings cannot tell its forms apart, and
    // neither is ruled out (an ORT per-node profile share would tell them).
    EXPECT_GT(w_gelu, 0.3) << name;
    EXPECT_LT(w_gelu, 0.7) << name;
  }
}

}  // namespace
}  // namespace layoutx::costmodel
