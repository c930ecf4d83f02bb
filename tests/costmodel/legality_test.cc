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
    EXPECT_EQ(c.reasons.size(), 1u);  // RoPE's x * cos (broadcast on one side only) is not it
  }
}

TEST(Legality, AcceptsTheirMatMulFormsAndRollUnderW4a16) {
  EXPECT_EQ(check("score-join", {"precision=w4a16"}).compiles, Compiles::kYes);
  EXPECT_EQ(check("roll", {"precision=w4a16"}).compiles, Compiles::kYes);
  EXPECT_EQ(check("ring", {"precision=w4a16"}, model::LayerType::kFull).compiles, Compiles::kYes);
}

TEST(Legality, EveryFormCompilesUnderFp16) {
  Legality l = check("score-join", {"softmax=explicit", "new_score=mul_reducesum", "new_value=broadcast_mul"});
  EXPECT_EQ(l.compiles, Compiles::kYes);
  EXPECT_TRUE(l.reasons.empty());
}

TEST(Legality, NeverTriedW8a16FormsAreUnknown) {
  for (const char* set : {"softmax=explicit", "new_score=mul_reducesum", "new_value=broadcast_mul"}) {
    Legality l = check("score-join", {set, "precision=w8a16"});
    EXPECT_EQ(l.compiles, Compiles::kUnknown) << set;
    EXPECT_TRUE(mentions(l, "never tried")) << set;
  }
  // A failing form wins over an unknown one.
  EXPECT_EQ(check("score-join", {"softmax=explicit", "precision=w4a16"}).compiles, Compiles::kNo);
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
    load_rules_text("version: 1\ndefault: {result: ok, evidence: x}\nforms:\n  - {id: a, description: d, match: {kind: Mull}, outcomes: {w4a16: {result: fail, evidence: e}}}\n",
                    "rules.yaml");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rules.yaml:4:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown op kind 'Mull'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace layoutx::costmodel
