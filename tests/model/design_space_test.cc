// The design-space table: what it enumerates, how keys leave defaults out, and that stored keys
// and layout files written before an axis existed still resolve once it is added.
#include "model/design_space.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>

#include "model/variant.h"
#include "support/error.h"
#include "tests/error_message.h"

namespace layoutx::model {
namespace {

AxisScope scope(Activation a) {
  AxisScope s;
  s.activation = a;
  return s;
}

// The product of the explored layout axes' value counts, less the combinations where a
// conditional axis is off its default without its condition: returns 2 x softmax 3 x gelu 2 x
// (keys 1 + scores 2x2) x kv_dtype 3 x k_layout 2 x weight_quant 4 (w4a16 only) x sliding_cache 2.
// projection is priced but not explored; heads is not priced.
TEST(DesignSpace, EnumeratesTheMeaningfulVariants) {
  const auto& d = design_space();
  const Variant base = Variant{}.set(Precision::kW4A16);
  const auto gelu_model = scope(Activation::kGelu);
  const auto silu_model = scope(Activation::kSilu);
  auto all = d.variants(base, &gelu_model);
  EXPECT_EQ(all.size(), 2u * 3u * 2u * (1u + 2u * 2u) * 3u * 2u * 4u * 2u);
  // At w8a16 weight_quant does not apply; a full layer's scope leaves sliding_cache out.
  EXPECT_EQ(d.variants(Variant{}.set(Precision::kW8A16), &gelu_model).size(), all.size() / 4);
  AxisScope full = gelu_model;
  full.layer_type = LayerType::kFull;
  EXPECT_EQ(d.variants(base, &full).size(), all.size() / 2);
  for (const auto& v : d.variants(base, &full)) EXPECT_EQ(v.value[d.axis_index("sliding_cache")], 0) << v.key();
  std::set<std::string> keys;
  for (const auto& v : all) {
    EXPECT_EQ(v.precision(), Precision::kW4A16);
    EXPECT_NO_THROW(d.validate(v));
    keys.insert(v.key());
  }
  EXPECT_EQ(keys.size(), all.size());  // no two variants share a key
  // A SiLU model has no GELU axis: half as many, every one at the axis's default.
  auto silu = d.variants(base, &silu_model);
  EXPECT_EQ(silu.size(), all.size() / 2);
  for (const auto& v : silu) EXPECT_EQ(d.spelled(v, &silu_model).size(), d.spelled(v).size() - 1) << v.key();
}

TEST(DesignSpace, KeysLeaveDefaultsOutAndKeepPrecision) {
  EXPECT_EQ(preset("roll").key(), "precision=fp16");
  EXPECT_EQ(parse_variant("score-join", {"new_score=mul_reducesum", "precision=w8a16"}).key(),
            "returns=new_entry,join=scores,new_score=mul_reducesum,precision=w8a16");
  // A v2 key (every axis spelled) names the same variant.
  EXPECT_EQ(parse_variant("returns=new_entry,join=keys,softmax=fused,gelu=erf,precision=w4a16"),
            preset("ring", Precision::kW4A16));
}

TEST(DesignSpace, TheModelsOwnGeluIsItsDefault) {
  const auto& d = design_space();
  const auto tanh_model = scope(Activation::kGeluTanh);
  const auto silu_model = scope(Activation::kSilu);
  Variant ring = d.preset("ring", d.defaults_for(tanh_model, Variant{}));
  EXPECT_EQ(ring.gelu(), GeluForm::kTanh);
  EXPECT_EQ(d.preset_of(ring, &tanh_model), "ring");
  EXPECT_EQ(d.display_name(ring, &tanh_model), "ring");
  EXPECT_EQ(d.display_name(ring), "ring+gelu=tanh");  // against the table's default
  std::string msg = testing::error_message([&] { d.validate_for(ring, silu_model); });
  EXPECT_NE(msg.find("gelu=tanh: this model has no gelu"), std::string::npos) << msg;
}

// Issue #32 item 3: presets and keys are relative to the model. A preset or a key that leaves
// the gelu axis out means the model's own GELU (tanh for a gelu_tanh model); only an explicit
// gelu= gives the other. Keys of an erf model (Spark) are the same with or without the model.
TEST(DesignSpace, APresetNeverChangesTheModelsOwnGelu) {
  const auto& d = design_space();
  const auto tanh_model = scope(Activation::kGeluTanh);
  const auto erf_model = scope(Activation::kGelu);
  for (const auto& name : preset_names()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(d.parse(name, {}, &tanh_model).gelu(), GeluForm::kTanh);
    EXPECT_EQ(d.parse(name, {"precision=w4a16"}, &tanh_model).gelu(), GeluForm::kTanh);
    EXPECT_EQ(d.parse(name, {}, &erf_model).gelu(), GeluForm::kErf);
    EXPECT_EQ(d.preset_of(d.parse(name, {}, &tanh_model), &tanh_model), name);
    // Only an explicit --set gelu=erf gives the other activation.
    EXPECT_EQ(d.parse(name, {"gelu=erf"}, &tanh_model).gelu(), GeluForm::kErf);
  }
  // A stored key without a gelu axis means the model's own.
  EXPECT_EQ(d.parse("returns=new_entry,precision=fp16", {}, &tanh_model).gelu(), GeluForm::kTanh);
  EXPECT_EQ(d.parse("returns=new_entry,gelu=erf,precision=fp16", {}, &tanh_model).gelu(), GeluForm::kErf);
  EXPECT_EQ(d.parse("returns=new_entry,precision=fp16", {}, &erf_model).gelu(), GeluForm::kErf);
  // The verbs' entry point says the same.
  EXPECT_EQ(parse_variant("ring", {}, tanh_model).gelu(), GeluForm::kTanh);
}

TEST(DesignSpace, KeysRelativeToTheModelParseBackAndSparkKeysAreUnchanged) {
  const auto& d = design_space();
  const auto tanh_model = scope(Activation::kGeluTanh);
  const auto erf_model = scope(Activation::kGelu);
  const auto silu_model = scope(Activation::kSilu);
  for (Precision p : {Precision::kFp16, Precision::kW8A16, Precision::kW4A16}) {
    const Variant base = Variant{}.set(p);
    // An erf model (Spark): every key byte-identical to the model-free key stored today.
    for (const auto& v : d.variants(base, &erf_model)) {
      EXPECT_EQ(d.key(v, &erf_model), d.key(v));
      EXPECT_EQ(d.parse(d.key(v), {}, &erf_model), v) << d.key(v);
    }
    for (const auto& v : d.variants(base, &silu_model)) EXPECT_EQ(d.key(v, &silu_model), d.key(v));
    // A tanh model: its own tanh is still spelled (keys stored for Gemma stay as they were), its
    // erf is spelled gelu=erf, and every key parses back to the same variant with or without
    // the model.
    for (const auto& v : d.variants(base, &tanh_model)) {
      const std::string k = d.key(v, &tanh_model);
      EXPECT_EQ(d.parse(k, {}, &tanh_model), v) << k;
      EXPECT_EQ(d.parse(k), v) << k;
      if (v.gelu() == GeluForm::kTanh) EXPECT_EQ(k, d.key(v));
      else EXPECT_NE(k.find("gelu=erf"), std::string::npos) << k;
    }
  }
  EXPECT_EQ(d.key(d.parse("ring", {}, &tanh_model), &tanh_model), "returns=new_entry,gelu=tanh,precision=fp16");
  EXPECT_EQ(d.key(d.parse("ring", {"gelu=erf"}, &tanh_model), &tanh_model), "returns=new_entry,gelu=erf,precision=fp16");
  EXPECT_EQ(d.key(preset("ring")), "returns=new_entry,precision=fp16");
}

TEST(DesignSpace, DisplayAndFileNames) {
  const auto& d = design_space();
  Variant v = parse_variant("score-join", {"new_score=mul_reducesum"});
  EXPECT_EQ(d.display_name(v), "score-join+new_score=mul_reducesum");
  EXPECT_EQ(d.file_name(v), "score_join__new_score_mul_reducesum");
  EXPECT_EQ(d.display_name(parse_variant("roll", {"softmax=explicit"})), "roll+softmax=explicit");
}

TEST(DesignSpace, RefusesABadTable) {
  auto bad = [](std::vector<Axis> axes) { return testing::error_message([&] { DesignSpace d(std::move(axes), {}); }); };
  EXPECT_NE(bad({{.name = "a", .values = {"x"}}, {.name = "a", .values = {"y"}}}).find("axis a: listed twice"), std::string::npos);
  EXPECT_NE(bad({{.name = "b", .values = {"x"}, .only_with_axis = "c", .only_with_values = {"z"}}, {.name = "c", .values = {"z"}}})
                .find("not an earlier axis"),
            std::string::npos);
}

// The exporters' forms (issue 34): keys only when off their default (today's forms), priced by
// cost model 3 and explored, except heads and projection (priced, not explored: per-head chains
// are priced under the device's heads hypotheses, a 1x1 Conv as the MatMul).
TEST(DesignSpace, ExporterAxesArePricedAndExplored) {
  const auto& d = design_space();
  for (const char* a : {"kv_dtype", "k_layout", "weight_quant", "sliding_cache", "heads", "projection"})
    EXPECT_TRUE(d.axis(a).priced) << a;
  EXPECT_FALSE(d.axis("heads").explored);
  EXPECT_FALSE(d.axis("projection").explored);
  // Today's forms are the defaults: K is stored transposed [kv, D, N], an f16 cache, per-channel.
  EXPECT_EQ(d.axis("k_layout").values[0], "transposed");
  EXPECT_EQ(d.axis("kv_dtype").values[0], "f16");
  EXPECT_EQ(d.axis("weight_quant").values[0], "per_channel");
  const Variant ring = preset("ring", Precision::kW4A16);
  EXPECT_EQ(ring.kv_dtype(), KvDtype::kF16);
  EXPECT_EQ(ring.k_layout(), KLayout::kTransposed);
  EXPECT_EQ(ring.weight_quant(), WeightQuant::kPerChannel);
  // The unpriced axis is not spelled at its default; keys leave every default out.
  for (const auto& [axis, value] : d.spelled(ring)) EXPECT_TRUE(d.axis(axis).priced) << axis;
  Variant v = parse_variant("ring", {"kv_dtype=u8", "k_layout=rows", "weight_quant=block32", "precision=w4a16"});
  EXPECT_EQ(v.key(), "returns=new_entry,precision=w4a16,kv_dtype=u8,k_layout=rows,weight_quant=block32");
  EXPECT_EQ(parse_variant(v.key()), v);
  EXPECT_EQ(d.spelled(v).size(), d.spelled(ring).size());
  EXPECT_EQ(d.display_name(v), "ring+kv_dtype=u8+k_layout=rows+weight_quant=block32");
  EXPECT_EQ(block_rows(v.weight_quant()), 32);
  // The pricing verbs take the priced forms and refuse an unpriced one (a throwaway axis) by name.
  EXPECT_NO_THROW(d.require_priced(v, "predict"));
  EXPECT_NO_THROW(d.require_priced(parse_variant("ring", {"heads=per_head"}), "predict"));
  const DesignSpace later = d.with_axis({.name = "kv_layout", .values = {"bshd", "bhsd"}, .meaning = "throwaway",
                                         .priced = false, .priced_by = "a later cost model"});
  const Variant unpriced = later.parse("returns=new_entry,kv_layout=bhsd");
  std::string msg = testing::error_message([&] { later.require_priced(unpriced, "predict"); });
  EXPECT_NE(msg.find("predict: kv_layout=bhsd: not priced yet: a later cost model"), std::string::npos) << msg;
  // The fidelity figure of a layout-only form is its default's.
  EXPECT_EQ(d.numerics_representative(v), parse_variant("ring", {"kv_dtype=u8", "weight_quant=block32", "precision=w4a16"}));
  EXPECT_TRUE(d.priced_value(d.axis_index("softmax"), 2));
  const Variant masked = parse_variant("ring", {"softmax=masked"});
  EXPECT_EQ(masked.softmax(), SoftmaxForm::kMasked);
  EXPECT_EQ(masked.key(), "returns=new_entry,softmax=masked,precision=fp16");
  // Block quantization is a 4-bit weight form only.
  msg = testing::error_message([&] { parse_variant("ring", {"weight_quant=block64", "precision=fp16"}); });
  EXPECT_NE(msg.find("weight_quant=block64: applies only with precision=w4a16"), std::string::npos) << msg;
  // heads and projection: today's forms by default, keyed off them; neither is enumerated.
  EXPECT_EQ(ring.heads(), HeadsForm::kGrouped);
  EXPECT_EQ(ring.projection(), ProjectionForm::kMatMul);
  const Variant sha = parse_variant("ring", {"heads=per_head", "projection=conv1x1"});
  EXPECT_EQ(sha.heads(), HeadsForm::kPerHead);
  EXPECT_EQ(sha.projection(), ProjectionForm::kConv1x1);
  EXPECT_EQ(sha.key(), "returns=new_entry,precision=fp16,heads=per_head,projection=conv1x1");
  EXPECT_EQ(parse_variant(sha.key()), sha);
  AxisScope gelu;
  for (const auto& x : d.variants(ring, &gelu)) {
    EXPECT_EQ(x.heads(), HeadsForm::kGrouped);
    EXPECT_EQ(x.projection(), ProjectionForm::kMatMul);
  }
}

// The next release adds an axis (here a throwaway "kv_layout", default bshd). Every key stored
// or written before it (v2 keys spelling every axis, current keys, the layout files of the last
// release) must parse under the new table to the same variant with the new axis at its default,
// and keep its key; a variant off the new default gets a key that says so.
class NewAxis : public ::testing::Test {
 protected:
  DesignSpace extended = design_space().with_axis(
      {.name = "kv_layout", .values = {"bshd", "bhsd"}, .meaning = "throwaway: cache layout"});
  size_t new_axis = extended.axis_index("kv_layout");

  void expect_resolves(const std::string& stored) {
    SCOPED_TRACE(stored);
    Variant before = parse_variant(stored);
    Variant after = extended.parse(stored);
    EXPECT_EQ(after, before);  // same values on the shipped axes, the new one at its default
    EXPECT_EQ(extended.value(after, new_axis), "bshd");
    EXPECT_EQ(extended.key(after), before.key());
  }
};

TEST_F(NewAxis, StoredKeysStillResolve) {
  for (const char* k : {"returns=window,join=keys,softmax=fused,gelu=erf,precision=fp16",
                        "returns=new_entry,join=scores,softmax=explicit,new_score=mul_reducesum,new_value=matmul,gelu=tanh,precision=w8a16",
                        "returns=new_entry,precision=w4a16", "ring", "score-join"})
    expect_resolves(k);
  for (const auto& v : design_space().variants(Variant{})) expect_resolves(v.key());
}

TEST_F(NewAxis, LayoutFilesOfTheLastReleaseStillResolve) {
  int entries = 0;
  for (const char* f : {"spark-x2.5-1.7b-w4a16-ctx1024.yaml", "spark-x2.5-1.7b-w4a16-ctx4096.yaml"}) {
    YAML::Node doc = YAML::LoadFile(std::string(LAYOUTX_TEST_DIR) + "/fixtures/layouts-v2/" + f);
    for (const auto& t : {"sliding", "full"}) {
      expect_resolves(doc["defaults"][t]["variant_key"].as<std::string>());
      ++entries;
    }
    for (const auto& layer : doc["layers"]) {
      expect_resolves(layer["variant_key"].as<std::string>());
      ++entries;
    }
  }
  EXPECT_EQ(entries, 2 * (2 + 28));
}

TEST_F(NewAxis, AVariantOffTheNewDefaultSaysSo) {
  Variant v = extended.parse("ring", {"kv_layout=bhsd", "precision=w4a16"});
  EXPECT_EQ(extended.key(v), "returns=new_entry,precision=w4a16,kv_layout=bhsd");
  EXPECT_EQ(extended.parse(extended.key(v)), v);
  EXPECT_EQ(extended.display_name(v), "ring+kv_layout=bhsd");
  EXPECT_EQ(extended.variants(Variant{}).size(), 2 * design_space().variants(Variant{}).size());
  // The shipped table does not know it: an old layoutx refuses the new key by name.
  std::string msg = testing::error_message([&] { parse_variant(extended.key(v)); });
  EXPECT_NE(msg.find("unknown axis 'kv_layout'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace layoutx::model
