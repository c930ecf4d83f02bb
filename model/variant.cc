#include "model/variant.h"

#include "model/design_space.h"

namespace layoutx::model {

namespace {
const char* name_of(size_t axis, size_t value) { return design_space().axes()[axis].values.at(value).c_str(); }
}  // namespace

const char* to_string(KvReturn v) { return name_of(kReturnsAxis, static_cast<size_t>(v)); }
const char* to_string(Join v) { return name_of(kJoinAxis, static_cast<size_t>(v)); }
const char* to_string(SoftmaxForm v) { return name_of(kSoftmaxAxis, static_cast<size_t>(v)); }
const char* to_string(NewScore v) { return name_of(kNewScoreAxis, static_cast<size_t>(v)); }
const char* to_string(NewValue v) { return name_of(kNewValueAxis, static_cast<size_t>(v)); }
const char* to_string(GeluForm v) { return name_of(kGeluAxis, static_cast<size_t>(v)); }
const char* to_string(Precision v) { return name_of(kPrecisionAxis, static_cast<size_t>(v)); }
const char* to_string(KvDtype v) { return name_of(kKvDtypeAxis, static_cast<size_t>(v)); }
const char* to_string(KLayout v) { return name_of(kKLayoutAxis, static_cast<size_t>(v)); }
const char* to_string(WeightQuant v) { return name_of(kWeightQuantAxis, static_cast<size_t>(v)); }

int block_rows(WeightQuant q) {
  switch (q) {
    case WeightQuant::kPerChannel: return 0;
    case WeightQuant::kBlock16: return 16;
    case WeightQuant::kBlock32: return 32;
    case WeightQuant::kBlock64: return 64;
  }
  return 0;
}

Precision parse_precision(std::string_view s) {
  Variant v;
  v.set("precision", s);
  return v.precision();
}

int weight_bits(Precision p) {
  switch (p) {
    case Precision::kFp16: return 16;
    case Precision::kW8A16: return 8;
    case Precision::kW4A16: return 4;
  }
  return 16;
}

bool is_quantized(Precision p) { return p != Precision::kFp16; }

std::vector<std::string> axis_names() {
  std::vector<std::string> names;
  for (const auto& a : design_space().axes()) names.push_back(a.name);
  return names;
}

const std::vector<std::string>& axis_values(std::string_view axis) { return design_space().axis(axis).values; }

std::string axis_value(const Variant& v, std::string_view axis) { return design_space().value(v, axis); }

void Variant::set(std::string_view axis, std::string_view v) { design_space().set(*this, axis, v); }
void Variant::validate() const { design_space().validate(*this); }
std::string Variant::key() const { return design_space().key(*this); }
std::string Variant::preset() const { return design_space().preset_of(*this); }
std::string Variant::key(const AxisScope& m) const { return design_space().key(*this, &m); }
std::string Variant::preset(const AxisScope& m) const { return design_space().preset_of(*this, &m); }

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : design_space().presets()) names.push_back(p.name);
  return names;
}

Variant preset(std::string_view name, Precision precision) {
  return design_space().preset(name, Variant{}.set(precision));
}

Variant parse_variant(std::string_view preset_or_key, const std::vector<std::string>& sets) {
  return design_space().parse(preset_or_key, sets);
}

Variant parse_variant(std::string_view preset_or_key, const std::vector<std::string>& sets, const AxisScope& m) {
  return design_space().parse(preset_or_key, sets, &m);
}

}  // namespace layoutx::model
