// Variant: one point of the layout design space. The axes, their values, defaults, conditions
// and presets are the table in model/design_space.h; a Variant holds one value index per axis of
// that table, and its typed accessors name the shipped table's axes.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace layoutx::model {

struct AxisScope;  // model/design_space.h: what of a model decides its axes' defaults

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
// One Softmax op (after the mask add), max/sub/exp/sum/div, or QNN's MaskedSoftmax (one
// Softmax op taking the scores and the additive mask: the add folded in).
enum class SoftmaxForm { kFused, kExplicit, kMasked };
enum class NewScore { kMatMul, kMulReduceSum };  // only with join: scores
enum class NewValue { kMatMul, kBroadcastMul };  // only with join: scores
enum class GeluForm { kErf, kTanh };             // only for GELU models
enum class Precision { kFp16, kW8A16, kW4A16 };  // weights / activations
// The K/V caches' dtype at the graph boundary: f16 (today; a quantized graph converts it to u16
// inside), u8 (8-bit symmetric, the new entry quantized with the cache's own scale so the
// runtime copies codes), u16 (16-bit fixed point).
enum class KvDtype { kF16, kU8, kU16 };
// The K cache's layout: transposed [kv, D, N] (today) or rows [kv, N, D].
enum class KLayout { kTransposed, kRows };
// 4-bit weights: per output channel (today), or LPBQ blocks of 16/32/64 input rows.
enum class WeightQuant { kPerChannel, kBlock16, kBlock32, kBlock64 };
// Rows per block of a WeightQuant (0: per channel).
int block_rows(WeightQuant q);
// A sliding layer's cache: its window (window-1 slots, today) or context-length (context-1
// slots, as a full layer's) with the window enforced by the mask.
enum class SlidingCache { kWindow, kContext };
// Attention heads: grouped (one op per tensor, heads an axis, today) or per_head (one op chain
// per query head, as the exporters' MHA-to-SHA passes produce: its own projection slices, RoPE,
// scores, softmax and weighted values; many more, smaller ops).
enum class HeadsForm { kGrouped, kPerHead };
// Each Linear as a MatMul (today) or a 1x1 Conv2d on [1, C, 1, 1] activations with weights
// [out, in, 1, 1] (the exporters' form).
enum class ProjectionForm { kMatMul, kConv1x1 };

// The shipped table's axis positions (design_space.cc checks its rows against them). Each
// enum above is the value index of its axis.
enum AxisPosition : size_t {
  kReturnsAxis, kJoinAxis, kSoftmaxAxis, kNewScoreAxis, kNewValueAxis, kGeluAxis, kPrecisionAxis,
  kKvDtypeAxis, kKLayoutAxis, kWeightQuantAxis, kSlidingCacheAxis, kHeadsAxis, kProjectionAxis
};

struct Variant {
  // Value index per axis, in table order; 0 is each axis's table default. Axes a newer table
  // adds past the shipped ones live here too.
  std::array<std::uint8_t, 16> value{};

  KvReturn returns() const { return static_cast<KvReturn>(value[kReturnsAxis]); }
  Join join() const { return static_cast<Join>(value[kJoinAxis]); }
  SoftmaxForm softmax() const { return static_cast<SoftmaxForm>(value[kSoftmaxAxis]); }
  NewScore new_score() const { return static_cast<NewScore>(value[kNewScoreAxis]); }
  NewValue new_value() const { return static_cast<NewValue>(value[kNewValueAxis]); }
  GeluForm gelu() const { return static_cast<GeluForm>(value[kGeluAxis]); }
  Precision precision() const { return static_cast<Precision>(value[kPrecisionAxis]); }
  KvDtype kv_dtype() const { return static_cast<KvDtype>(value[kKvDtypeAxis]); }
  KLayout k_layout() const { return static_cast<KLayout>(value[kKLayoutAxis]); }
  WeightQuant weight_quant() const { return static_cast<WeightQuant>(value[kWeightQuantAxis]); }
  SlidingCache sliding_cache() const { return static_cast<SlidingCache>(value[kSlidingCacheAxis]); }
  HeadsForm heads() const { return static_cast<HeadsForm>(value[kHeadsAxis]); }
  ProjectionForm projection() const { return static_cast<ProjectionForm>(value[kProjectionAxis]); }

  Variant& set(KvReturn x) { return put(kReturnsAxis, x); }
  Variant& set(Join x) { return put(kJoinAxis, x); }
  Variant& set(SoftmaxForm x) { return put(kSoftmaxAxis, x); }
  Variant& set(NewScore x) { return put(kNewScoreAxis, x); }
  Variant& set(NewValue x) { return put(kNewValueAxis, x); }
  Variant& set(GeluForm x) { return put(kGeluAxis, x); }
  Variant& set(Precision x) { return put(kPrecisionAxis, x); }
  Variant& set(KvDtype x) { return put(kKvDtypeAxis, x); }
  Variant& set(KLayout x) { return put(kKLayoutAxis, x); }
  Variant& set(WeightQuant x) { return put(kWeightQuantAxis, x); }
  Variant& set(SlidingCache x) { return put(kSlidingCacheAxis, x); }
  Variant& set(HeadsForm x) { return put(kHeadsAxis, x); }
  Variant& set(ProjectionForm x) { return put(kProjectionAxis, x); }

  bool operator==(const Variant&) const = default;
  bool operator<(const Variant& o) const { return value < o.value; }

  // The shipped table's canonical key (DesignSpace::key): the axes off their default, plus the
  // precision, e.g. "returns=new_entry,precision=w4a16".
  std::string key() const;
  // The key relative to a model (DesignSpace::key with the model): what a key stored for that
  // model must be, since a key that leaves an axis out means the model's own value.
  std::string key(const AxisScope& m) const;
  // The preset whose axes this variant has (precision aside), or "" if none; with the model,
  // on the model's defaults ("ring" on Gemma is ring with gelu=tanh).
  std::string preset() const;
  std::string preset(const AxisScope& m) const;
  // Sets one axis from text; throws Error naming the axis and the allowed values.
  void set(std::string_view axis, std::string_view value);
  // Throws Error if the combination is meaningless (e.g. new_score set while join is keys).
  void validate() const;

 private:
  template <class E>
  Variant& put(size_t axis, E x) {
    value[axis] = static_cast<std::uint8_t>(x);
    return *this;
  }
};

// The shipped table's axes in canonical order, each axis's values (first = default), and the
// current value of an axis as text.
std::vector<std::string> axis_names();
const std::vector<std::string>& axis_values(std::string_view axis);
std::string axis_value(const Variant& v, std::string_view axis);

// Presets: roll = {window, keys}; ring = {new_entry, keys}; score-join = {new_entry, scores};
// every other axis at its default. Throws Error for an unknown name.
Variant preset(std::string_view name, Precision precision = Precision::kFp16);
std::vector<std::string> preset_names();

// A preset name or a key (DesignSpace::parse); then `sets` ("axis=value") applied in order;
// validated. Throws Error naming what is wrong. With the model, every axis the text leaves out
// is the model's own (a preset never changes the model's GELU; only an explicit gelu= does).
Variant parse_variant(std::string_view preset_or_key, const std::vector<std::string>& sets = {});
Variant parse_variant(std::string_view preset_or_key, const std::vector<std::string>& sets, const AxisScope& m);

const char* to_string(KvReturn v);
const char* to_string(Join v);
const char* to_string(SoftmaxForm v);
const char* to_string(NewScore v);
const char* to_string(NewValue v);
const char* to_string(GeluForm v);
const char* to_string(Precision v);
const char* to_string(KvDtype v);
const char* to_string(KLayout v);
const char* to_string(WeightQuant v);
Precision parse_precision(std::string_view s);

// Bits per weight element and whether the graph is quantized (16-bit quantized activations,
// conversions where the float runtime meets the quantized graph).
int weight_bits(Precision p);
bool is_quantized(Precision p);

}  // namespace layoutx::model
