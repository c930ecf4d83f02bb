// Converter legality from configs/rules/qnn-htp.yaml, matched on the lowered graph.
#include <gtest/gtest.h>

#include "costmodel/legality.h"
#include "costmodel/lowering.h"
#include "model/builder.h"
#include "model/model_loader.h"
#include "support/error.h"

namespace layoutx::costmodel {
namespace {

const std::string kConfigs = LAYOUTX_CONFIG_DIR;

Legality check(const std::string& layout, std::vector<std::string> sets, model::LayerType t = model::LayerType::kSliding) {
  static const RuleSet rules = load_rules(kConfigs + "/rules/qnn-htp.yaml");
  static const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  model::LayerGraph g = model::build_layer_graph(m.layer(t, 4096), model::parse_variant(layout, sets));
  return check_legality(rules, g, lower(g));
}

bool mentions(const Legality& l, const std::string& s) {
  for (const auto& r : l.reasons)
    if (r.find(s) != std::string::npos) return true;
  return false;
}

TEST(Legality, RefusesTheThreeW4a16FormsWithTheirRule) {
  for (auto t : {model::LayerType::kSliding, model::LayerType::kFull}) {
    Legality a = check("score-join", {"softmax=explicit", "precision=w4a16"}, t);
    EXPECT_EQ(a.compiles, Compiles::kNo);
    EXPECT_TRUE(mentions(a, "explicit-softmax: attn/softmax/max")) << a.reasons.size();
    EXPECT_TRUE(mentions(a, "exit code 14"));
    Legality b = check("score-join", {"new_score=mul_reducesum", "precision=w4a16"}, t);
    EXPECT_EQ(b.compiles, Compiles::kNo);
    EXPECT_TRUE(mentions(b, "broadcast-mul-reducesum: attn/score_new_mul"));
    Legality c = check("score-join", {"new_value=broadcast_mul", "precision=w4a16"}, t);
    EXPECT_EQ(c.compiles, Compiles::kNo);
    EXPECT_TRUE(mentions(c, "two-axis-broadcast-mul: attn/context_new"));
    // The failing form explains the outcome; RoPE's x * cos (broadcast on one side only) is not it.
    ASSERT_FALSE(c.reasons.empty());
    EXPECT_NE(c.reasons[0].find("two-axis-broadcast-mul: attn/context_new"), std::string::npos) << c.reasons[0];
    EXPECT_FALSE(mentions(c, "rope"));
  }
}

TEST(Legality, RollRingAndKeyJoinAreKnownUnderW4a16) {
  EXPECT_EQ(check("roll", {"precision=w4a16"}).compiles, Compiles::kYes);
  EXPECT_EQ(check("ring", {"precision=w4a16"}).compiles, Compiles::kYes);
  Legality full = check("ring", {"precision=w4a16"}, model::LayerType::kFull);
  EXPECT_EQ(full.compiles, Compiles::kYes);
  EXPECT_TRUE(full.reasons.empty());
}

TEST(Legality, ScoreJoinWithMatMulFormsIsContestedUnderW4a16WithBothRecords) {
  for (auto t : {model::LayerType::kSliding, model::LayerType::kFull}) {
    Legality l = check("score-join", {"precision=w4a16"}, t);
    EXPECT_EQ(l.compiles, Compiles::kContested);
    ASSERT_EQ(l.reasons.size(), 1u);
    EXPECT_TRUE(mentions(l, "score-join: attn/scores"));
    EXPECT_TRUE(mentions(l, "second export")) << l.reasons[0];
    EXPECT_TRUE(mentions(l, "third export")) << l.reasons[0];
    EXPECT_TRUE(mentions(l, "exit code 14")) << l.reasons[0];
  }
}

TEST(Legality, OnlyTheKeyJoinWasBuiltUnderW8a16) {
  EXPECT_EQ(check("roll", {"precision=w8a16"}).compiles, Compiles::kYes);
  EXPECT_EQ(check("ring", {"precision=w8a16"}, model::LayerType::kFull).compiles, Compiles::kYes);
  Legality sj = check("score-join", {"precision=w8a16"});
  EXPECT_EQ(sj.compiles, Compiles::kUnknown);
  EXPECT_TRUE(mentions(sj, "never tried"));
  Legality tanh = check("roll", {"gelu=tanh", "precision=w8a16"});
  EXPECT_EQ(tanh.compiles, Compiles::kUnknown);
  EXPECT_TRUE(mentions(tanh, "tanh-gelu: mlp/act"));
}

TEST(Legality, EveryFormCompilesUnderFp16) {
  Legality l = check("score-join", {"softmax=explicit", "new_score=mul_reducesum", "new_value=broadcast_mul", "gelu=tanh"});
  EXPECT_EQ(l.compiles, Compiles::kYes);
  EXPECT_TRUE(l.reasons.empty());
}

TEST(Legality, NeverTriedW8a16FormsAreUnknown) {
  for (const char* set : {"softmax=explicit", "new_score=mul_reducesum", "new_value=broadcast_mul"}) {
    Legality l = check("score-join", {set, "precision=w8a16"});
    EXPECT_EQ(l.compiles, Compiles::kUnknown) << set;
    EXPECT_TRUE(mentions(l, "never tried")) << set;
  }
  // A failing form wins over a contested one, and its reason comes first.
  Legality l = check("score-join", {"softmax=explicit", "precision=w4a16"});
  EXPECT_EQ(l.compiles, Compiles::kNo);
  ASSERT_EQ(l.reasons.size(), 2u);
  EXPECT_NE(l.reasons[0].find("explicit-softmax"), std::string::npos) << l.reasons[0];
}

// The model's own GELU form is what its exporter builds (judged by the defaults); the gelu
// records are about changing it (legality.cc is_own_gelu).
Legality check_model(const std::string& model, std::vector<std::string> sets) {
  static const RuleSet rules = load_rules(kConfigs + "/rules/qnn-htp.yaml");
  const model::ModelSpec m = model::load_model(model);
  model::LayerGraph g = model::build_layer_graph(m.layer(model::LayerType::kSliding, 4096), model::parse_variant("ring", sets));
  return check_legality(rules, g, lower(g));
}

TEST(Legality, TheModelsOwnGeluFormIsJudgedByTheDefaults) {
  const std::string gemma = kConfigs + "/models/gemma-3-1b.yaml";
  // Gemma 3's own tanh GELU at w4a16: as known as the ring's other ops (the tanh-gelu rule's
  // w4a16 "never built" is about Spark's erf rewritten to tanh).
  const Legality own = check_model(gemma, {"gelu=tanh", "precision=w4a16"});
  EXPECT_EQ(own.compiles, check("ring", {"precision=w4a16"}).compiles);
  EXPECT_FALSE(mentions(own, "tanh-gelu"));
  EXPECT_FALSE(mentions(own, "gelu-change"));
  // Gemma changed to erf: no record of that change anywhere, at any precision.
  for (const char* p : {"precision=fp16", "precision=w4a16"}) {
    const Legality erf = check_model(gemma, {"gelu=erf", p});
    EXPECT_EQ(erf.compiles, Compiles::kUnknown) << p;
    EXPECT_TRUE(mentions(erf, "gelu-change: mlp/act (Gelu erf, the model's own GELU is gelu_tanh)")) << p;
  }
  // Spark changed to tanh: still its recorded rule (fp16 ok, w4a16 never built).
  EXPECT_EQ(check("ring", {"gelu=tanh", "precision=fp16"}).compiles, Compiles::kYes);
  const Legality spark = check("ring", {"gelu=tanh", "precision=w4a16"});
  EXPECT_EQ(spark.compiles, Compiles::kUnknown);
  EXPECT_TRUE(mentions(spark, "tanh-gelu"));
  EXPECT_FALSE(mentions(spark, "gelu-change"));
}

TEST(Legality, CombiningRecords) {
  Record ok{Compiles::kYes, 0, "a", "x"}, fail{Compiles::kNo, 14, "b", "y"};
  EXPECT_EQ(combine({}), Compiles::kUnknown);
  EXPECT_EQ(combine({ok, ok}), Compiles::kYes);
  EXPECT_EQ(combine({fail}), Compiles::kNo);
  EXPECT_EQ(combine({ok, fail}), Compiles::kContested);
  EXPECT_EQ(worse(Compiles::kContested, Compiles::kUnknown), Compiles::kContested);
  EXPECT_EQ(worse(Compiles::kContested, Compiles::kNo), Compiles::kNo);
  EXPECT_EQ(worse(Compiles::kYes, Compiles::kUnknown), Compiles::kUnknown);
  EXPECT_EQ(describe(fail), "fail, converter exit code 14 (b: y)");
}

TEST(Legality, MissingDefaultsAreUnknown) {
  RuleSet rs = load_rules_text("version: 2\ndefaults: {fp16: {result: ok, source: s, evidence: e}}\nforms: []\n", "r.yaml");
  static const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  model::LayerGraph g = model::build_layer_graph(m.layer(model::LayerType::kSliding, 4096), model::parse_variant("roll", {"precision=w8a16"}));
  Legality l = check_legality(rs, g, lower(g));
  EXPECT_EQ(l.compiles, Compiles::kUnknown);
  ASSERT_EQ(l.reasons.size(), 1u);
  EXPECT_NE(l.reasons[0].find("defaults"), std::string::npos);
}

TEST(Legality, BroadcastStructure) {
  static const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  model::LayerGraph g = model::build_layer_graph(m.layer(model::LayerType::kSliding, 4096),
                                                 model::parse_variant("score-join", {"new_value=broadcast_mul"}));
  // [kv,G,1] * [kv,1,D]: both operands broadcast, over G and D.
  Broadcast outer = broadcast_of(g, g.by_name("attn/context_new"));
  EXPECT_EQ(outer.axes, 2);
  EXPECT_TRUE(outer.all_operands);
  // [kv,G,D] * [1,1,D]: only the table is broadcast.
  Broadcast rope = broadcast_of(g, g.by_name("attn/q_rope/mul_cos"));
  EXPECT_EQ(rope.axes, 2);
  EXPECT_FALSE(rope.all_operands);
  // x * scalar constant: the folded constant does not count.
  EXPECT_EQ(broadcast_of(g, g.by_name("attn/q_scale")).axes, 0);
}

TEST(Legality, BadRulesFileNamesTheKey) {
  try {
    load_rules_text("version: 2\ndefaults: {fp16: {result: ok, source: s, evidence: x}}\nforms:\n  - {id: a, description: d, match: {kind: Mull}, records: [{precision: w4a16, result: fail, source: s, evidence: e}]}\n",
                    "rules.yaml");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rules.yaml:4:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown op kind 'Mull'"), std::string::npos) << e.what();
  }
  try {
    load_rules_text("version: 2\ndefaults: {}\nforms:\n  - {id: a, description: d, match: {kind: Mul}, records: [{precision: w4a16, result: contested, source: s, evidence: e}]}\n",
                    "rules.yaml");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rules.yaml:4:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("must be ok or fail"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace layoutx::costmodel
