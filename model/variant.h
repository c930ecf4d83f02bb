// Variant: one point of the layout design space (design.md, "The design space").
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace layoutx::model {

// What the layer hands back each token.
enum class KvReturn {
  kWindow,    // slices the oldest entry off and returns the whole updated cache (roll)
  kNewEntry,  // returns only the new K/V; the runtime writes a ring slot or appends
};
// Where the new token meets the cache.
enum class Join {
  kKeys,    // new key/value concatenated onto the cache, one softmax over all keys
  kScores,  // cache and new token scored separately, score vectors concatenated
};
enum class SoftmaxForm { kFused, kExplicit };           // one Softmax op, or max/sub/exp/sum/div
enum class NewScore { kMatMul, kMulReduceSum };         // only with join: scores
enum class NewValue { kMatMul, kBroadcastMul };         // only with join: scores
enum class GeluForm { kErf, kTanh };
enum class Precision { kFp16, kW8A16, kW4A16 };         // weights / activations

struct Variant {
  KvReturn returns = KvReturn::kWindow;
  Join join = Join::kKeys;
  SoftmaxForm softmax = SoftmaxForm::kFused;
  NewScore new_score = NewScore::kMatMul;
  NewValue new_value = NewValue::kMatMul;
  GeluForm gelu = GeluForm::kErf;
  Precision precision = Precision::kFp16;

  bool operator==(const Variant&) const = default;

  // Canonical key, the database's identity of a variant: "axis=value" pairs in the fixed axis
  // order, comma-separated, omitting new_score/new_value when join is keys (they do not apply).
  // e.g. "returns=window,join=keys,softmax=fused,gelu=erf,precision=w4a16".
  std::string key() const;
  // The preset whose axes this variant has (precision aside), or "" if none.
  std::string preset() const;
  // Sets one axis from text; throws Error naming the axis and the allowed values.
  void set(std::string_view axis, std::string_view value);
  // Throws Error if the combination is meaningless (e.g. new_score set while join is keys).
  void validate() const;
};

// The axes in canonical order, and each axis's values (first = default).
const std::vector<std::string>& axis_names();
const std::vector<std::string>& axis_values(std::string_view axis);
// Current value of an axis as text.
std::string axis_value(const Variant& v, std::string_view axis);

// Presets: roll = {window, keys}; ring = {new_entry, keys}; score-join = {new_entry, scores};
// every other axis at its default. Throws Error for an unknown name.
Variant preset(std::string_view name, Precision precision = Precision::kFp16);
const std::vector<std::string>& preset_names();

// A preset name or a canonical key ("returns=...,join=...,..."); then `sets` ("axis=value")
// applied in order; validated. Throws Error naming what is wrong.
Variant parse_variant(std::string_view preset_or_key, const std::vector<std::string>& sets = {});

const char* to_string(KvReturn v);
const char* to_string(Join v);
const char* to_string(SoftmaxForm v);
const char* to_string(NewScore v);
const char* to_string(NewValue v);
const char* to_string(GeluForm v);
const char* to_string(Precision v);
Precision parse_precision(std::string_view s);

// Bits per weight element and whether the graph is quantized (16-bit quantized activations,
// conversions where the float runtime meets the quantized graph).
int weight_bits(Precision p);
bool is_quantized(Precision p);

}  // namespace layoutx::model
