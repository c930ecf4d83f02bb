// The design space as one table (design.md, "The design space"): every layout axis with its
// values, its default, when it applies and what it means, and the presets. Variant, its key,
// validation, the enumerator of meaningful variants, the display name, the layout file, the ONNX
// names and the database all read this table; nothing else lists axes or values.
//
// Adding an axis: a row in shipped() (design_space.cc), an accessor and enum in variant.h, and
// the builder (and the PyTorch mirror, python/layoutx/torch.py) that gives it meaning. Stored keys
// and layout files stay valid: a key leaves out every axis at its default, and a reader fills a
// missing axis with its default (tests/model/design_space_test.cc adds a throwaway axis).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/model_spec.h"

namespace layoutx::model {

struct Variant;

// What of a model decides which axes apply and their defaults (its family's layer shape).
struct AxisScope {
  Activation activation = Activation::kGelu;
  std::string model;  // for messages
  // The layer type, when the scope is one layer: variants() leaves out the axes that change
  // nothing in it (sliding_cache for a full layer). Validation does not look at it.
  std::optional<LayerType> layer_type;
  AxisScope() = default;
  explicit AxisScope(const ModelSpec& m) : activation(m.activation), model(m.name) {}
  explicit AxisScope(const LayerSpec& l) : activation(l.activation), layer_type(l.type) {}
};

struct Axis {
  std::string name;
  std::vector<std::string> values;  // values[0] is the table default: left out of keys
  std::string meaning;              // one line, for --help and the docs
  // Applies only when another axis has one of these values (e.g. new_score only with
  // join=scores); empty: always. The other axis must come earlier in the table.
  std::string only_with_axis;
  std::vector<std::string> only_with_values;
  // Applies only to models whose MLP activation is a GELU (SiLU models have no GELU axis).
  bool gelu_models_only = false;
  // Changes only sliding layers' graphs: variants() of a full layer's scope keeps it at its
  // default (the same graph otherwise, twice).
  bool sliding_layers_only = false;
  // Every value computes the same function in exact arithmetic (a layout, not a numeric form:
  // k_layout, sliding_cache); its values differ by float rounding only (tests/numerics), so a
  // fidelity figure is measured once, at the default (numerics_representative).
  bool numerics_exact = false;
  // Enumerated by variants(). false: priced (predict, step and --set take it; a question that
  // fixes it is searched with it set on every candidate, explorer/selection.cc) but kept at its
  // default by the search, because the cost model prices its values alike but for one hypothesis
  // (projection: a 1x1 Conv lowers to the same matrix-unit op with the same bytes and MACs as the
  // MatMul; only w4-expanded-matmul streams a Conv's per-channel 4-bit weights packed), so
  // enumerating it would double the space for twins that are told apart by that alone.
  bool explored = true;
  // Spelled in every key even at its default (precision: what every stored timing is split by).
  bool in_every_key = false;
  // A layout choice the explorer enumerates; false for precision, the question's choice.
  bool layout_choice = true;
  // One of the exporters' forms (issue 34: kv_dtype, k_layout, weight_quant, sliding_cache,
  // heads, projection) rather than an attention layout the team's export varied; a question
  // can hold them at their defaults (exporter_axes()).
  bool exporter_form = false;
  // The default for a model, as a value index (e.g. gelu: the model's hidden_act); nullptr: 0.
  int (*model_default)(const AxisScope&) = nullptr;
  // Whether the cost model prices the axis's non-default values. An unpriced axis is built,
  // checked numerically and emitted, but the explorer keeps it at its default (variants() does
  // not enumerate it), spelled() leaves it out at its default (layout files and JSON `axes` as
  // before it existed), and predict/step refuse a non-default value (require_priced).
  bool priced = true;
  // Why not priced yet, for the refusal (e.g. "cost model 3").
  std::string priced_by;
  // On a priced axis, values the cost model does not price yet (e.g. softmax=masked): treated as
  // an unpriced axis's values (not enumerated, refused by the pricing verbs).
  std::vector<std::string> unpriced_values;
};

// A named point: roll, ring, score-join. Axes not named are at their defaults.
struct Preset {
  std::string name;
  std::vector<std::pair<std::string, std::string>> values;  // (axis, value)
  std::string meaning;
};

class DesignSpace {
 public:
  static constexpr size_t kMaxAxes = 16;  // Variant's fixed storage
  // Checks the table: unique names, at most kMaxAxes, conditions naming earlier axes and real
  // values, presets naming real axes and values. Throws Error otherwise.
  DesignSpace(std::vector<Axis> axes, std::vector<Preset> presets);

  // The table layoutx ships (design_space.cc). Its axis positions are Variant's accessors'.
  static const DesignSpace& shipped();
  // A copy with one more axis at the end (what the next release would add).
  DesignSpace with_axis(Axis extra) const;

  const std::vector<Axis>& axes() const { return axes_; }
  const std::vector<Preset>& presets() const { return presets_; }
  // Position of an axis; -1 if none. axis_index() throws Error listing the axes.
  int find(std::string_view name) const;
  // The names of the exporter-form axes, in table order.
  std::vector<std::string> exporter_axes() const;
  size_t axis_index(std::string_view name) const;
  const Axis& axis(std::string_view name) const { return axes_[axis_index(name)]; }

  // The value of axis i in v as text; setting one from text (throws Error naming the axis and
  // the allowed values).
  const std::string& value(const Variant& v, size_t i) const;
  std::string value(const Variant& v, std::string_view axis) const { return value(v, axis_index(axis)); }
  void set(Variant& v, std::string_view axis, std::string_view value) const;

  // The axes that apply to v (to the model too, when given) with their values, defaults
  // included, in table order: what a layout file's `axes` and the JSON `axes` objects spell.
  std::vector<std::pair<std::string, std::string>> spelled(const Variant& v, const AxisScope* m = nullptr) const;
  // Whether axis i applies to v: its condition on another axis holds.
  bool applies(const Variant& v, size_t i) const;
  // Whether axis i applies to a model (GELU axes only to GELU models).
  bool applies_to(const AxisScope& m, size_t i) const;

  // Canonical key: "axis=value" pairs in table order, comma-separated, of the axes that apply
  // and are not at their table default, plus every in_every_key axis. e.g. roll at fp16:
  // "precision=fp16"; ring at w4a16: "returns=new_entry,precision=w4a16". With the model, an
  // axis off the model's own default is spelled too, even at the table default (gelu=erf on a
  // gelu_tanh model), so that the key parses back to v with that model: a key that leaves an
  // axis out means the model's own value. For a model whose defaults are the table's (Spark)
  // the key is the same with or without the model; stored keys stay valid.
  std::string key(const Variant& v, const AxisScope* m = nullptr) const;
  // A preset name or a key (any subset of axes, in any order: the omitted ones take their
  // defaults, the model's own when the model is given, so keys written before an axis existed
  // still parse and "ring" on a gelu_tanh model keeps gelu=tanh), then `sets` ("axis=value") in
  // order, validated (for the model too, when given). Throws Error naming what is wrong.
  Variant parse(std::string_view preset_or_key, const std::vector<std::string>& sets = {},
                const AxisScope* m = nullptr) const;
  // Throws Error if an axis that does not apply is off its default (e.g. new_score set while
  // join is keys).
  void validate(const Variant& v) const;
  // Same, and an axis that does not apply to the model must be at its default.
  void validate_for(const Variant& v, const AxisScope& m) const;

  // `base` with a preset's axes set (the others keep base's values). Throws Error listing the
  // presets.
  Variant preset(std::string_view name, const Variant& base) const;
  // The preset v is, or "": a preset's axes set on the defaults (the model's, when given) at v's
  // precision.
  std::string preset_of(const Variant& v, const AxisScope* m = nullptr) const;

  // The display name: the nearest preset plus the layout axes that differ from it, e.g. "ring",
  // "score-join+new_score=mul_reducesum" (precision left out). file_name(): the same, safe as a
  // file or graph name ("score_join__new_score_mul_reducesum").
  std::string display_name(const Variant& v, const AxisScope* m = nullptr) const;
  std::string file_name(const Variant& v) const;
  // Layout axes (precision aside) on which two variants differ.
  int axis_changes(const Variant& from, const Variant& to) const;

  // The defaults for a model: every axis at the model's default (e.g. gelu=tanh for a
  // gelu_pytorch_tanh model), at `precision`.
  Variant defaults_for(const AxisScope& m, const Variant& base) const;
  // The defaults: the model's when given, else the table's, at base's precision.
  Variant defaults(const Variant& base, const AxisScope* m) const;
  // Every meaningful variant: all combinations of the layout axes that apply (to the model,
  // when given), the others at base's values (precision). Shipped table, Spark: 40.
  std::vector<Variant> variants(const Variant& base, const AxisScope* m = nullptr) const;
  // v with every numerics_exact axis at its default: the variant whose fidelity figure v shares.
  Variant numerics_representative(const Variant& v) const;
  // Throws Error naming every axis of v off its default that the cost model does not price
  // yet ("kv_dtype=u8: not priced yet: cost model 3 ..."); `what` prefixes the message (the
  // verb or flag).
  void require_priced(const Variant& v, const std::string& what) const;
  // v with every value the cost model does not price yet at its axis's default (the form that is
  // priced in its place), one note per change in `notes` ("heads=per_head is not priced yet:
  // priced as heads=grouped"). What prices a layout given from outside (a whole-model layout
  // file, a public record) uses it, so that an unpriced form is never priced as something else
  // silently.
  Variant priced_representative(const Variant& v, std::vector<std::string>& notes) const;
  // Whether value index k of axis i is priced: a priced axis's values except its
  // unpriced_values; an unpriced axis's default only.
  bool priced_value(size_t i, size_t k) const;

 private:
  std::vector<Axis> axes_;
  std::vector<Preset> presets_;
};

// Shorthand for the shipped table.
inline const DesignSpace& design_space() { return DesignSpace::shipped(); }

}  // namespace layoutx::model
