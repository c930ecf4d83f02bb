#include "model/variant.h"

#include <algorithm>
#include <map>

#include "support/error.h"

namespace layoutx::model {

namespace {

const std::map<std::string, std::vector<std::string>, std::less<>>& value_table() {
  static const std::map<std::string, std::vector<std::string>, std::less<>> t = {
      {"returns", {"window", "new_entry"}},
      {"join", {"keys", "scores"}},
      {"softmax", {"fused", "explicit"}},
      {"new_score", {"matmul", "mul_reducesum"}},
      {"new_value", {"matmul", "broadcast_mul"}},
      {"gelu", {"erf", "tanh"}},
      {"precision", {"fp16", "w8a16", "w4a16"}},
  };
  return t;
}

std::string join_list(const std::vector<std::string>& v) {
  std::string r;
  for (const auto& s : v) r += (r.empty() ? "" : ", ") + s;
  return r;
}

}  // namespace

const char* to_string(KvReturn v) { return v == KvReturn::kWindow ? "window" : "new_entry"; }
const char* to_string(Join v) { return v == Join::kKeys ? "keys" : "scores"; }
const char* to_string(SoftmaxForm v) { return v == SoftmaxForm::kFused ? "fused" : "explicit"; }
const char* to_string(NewScore v) { return v == NewScore::kMatMul ? "matmul" : "mul_reducesum"; }
const char* to_string(NewValue v) { return v == NewValue::kMatMul ? "matmul" : "broadcast_mul"; }
const char* to_string(GeluForm v) { return v == GeluForm::kErf ? "erf" : "tanh"; }
const char* to_string(Precision v) {
  switch (v) {
    case Precision::kFp16: return "fp16";
    case Precision::kW8A16: return "w8a16";
    case Precision::kW4A16: return "w4a16";
  }
  return "?";
}

Precision parse_precision(std::string_view s) {
  Variant v;
  v.set("precision", s);
  return v.precision;
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

const std::vector<std::string>& axis_names() {
  static const std::vector<std::string> names = {"returns", "join",  "softmax",  "new_score",
                                                 "new_value", "gelu", "precision"};
  return names;
}

const std::vector<std::string>& axis_values(std::string_view axis) {
  auto it = value_table().find(axis);
  if (it == value_table().end())
    throw Error("unknown axis '" + std::string(axis) + "' (axes: " + join_list(axis_names()) + ")");
  return it->second;
}

std::string axis_value(const Variant& v, std::string_view axis) {
  if (axis == "returns") return to_string(v.returns);
  if (axis == "join") return to_string(v.join);
  if (axis == "softmax") return to_string(v.softmax);
  if (axis == "new_score") return to_string(v.new_score);
  if (axis == "new_value") return to_string(v.new_value);
  if (axis == "gelu") return to_string(v.gelu);
  if (axis == "precision") return to_string(v.precision);
  axis_values(axis);  // throws the unknown-axis error
  return "";
}

void Variant::set(std::string_view axis, std::string_view value) {
  const auto& values = axis_values(axis);
  auto it = std::find(values.begin(), values.end(), value);
  if (it == values.end())
    throw Error(std::string(axis) + ": unknown value '" + std::string(value) + "' (allowed: " +
                join_list(values) + ")");
  int i = static_cast<int>(it - values.begin());
  if (axis == "returns") returns = static_cast<KvReturn>(i);
  else if (axis == "join") join = static_cast<Join>(i);
  else if (axis == "softmax") softmax = static_cast<SoftmaxForm>(i);
  else if (axis == "new_score") new_score = static_cast<NewScore>(i);
  else if (axis == "new_value") new_value = static_cast<NewValue>(i);
  else if (axis == "gelu") gelu = static_cast<GeluForm>(i);
  else if (axis == "precision") precision = static_cast<Precision>(i);
}

void Variant::validate() const {
  ErrorList e;
  if (join == Join::kKeys && new_score != NewScore::kMatMul)
    e.add(std::string("new_score=") + to_string(new_score) +
          ": applies only with join=scores (with join=keys the new key is concatenated onto the "
          "cache and scored by the same MatMul)");
  if (join == Join::kKeys && new_value != NewValue::kMatMul)
    e.add(std::string("new_value=") + to_string(new_value) +
          ": applies only with join=scores (with join=keys the new value is concatenated onto the "
          "cache and weighted by the same MatMul)");
  e.throw_if_any();
}

std::string Variant::key() const {
  std::string k;
  for (const auto& axis : axis_names()) {
    if (join == Join::kKeys && (axis == "new_score" || axis == "new_value")) continue;
    k += (k.empty() ? "" : ",") + axis + "=" + axis_value(*this, axis);
  }
  return k;
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"roll", "ring", "score-join"};
  return names;
}

Variant preset(std::string_view name, Precision precision) {
  Variant v;
  v.precision = precision;
  if (name == "roll") {
    v.returns = KvReturn::kWindow;
    v.join = Join::kKeys;
  } else if (name == "ring") {
    v.returns = KvReturn::kNewEntry;
    v.join = Join::kKeys;
  } else if (name == "score-join") {
    v.returns = KvReturn::kNewEntry;
    v.join = Join::kScores;
  } else {
    throw Error("layout: unknown preset '" + std::string(name) + "' (presets: " + join_list(preset_names()) +
                "; or a variant key such as 'returns=new_entry,join=keys,...')");
  }
  return v;
}

std::string Variant::preset() const {
  for (const auto& name : preset_names()) {
    Variant p = model::preset(name, precision);
    if (p == *this) return name;
  }
  return "";
}

Variant parse_variant(std::string_view preset_or_key, const std::vector<std::string>& sets) {
  Variant v;
  if (preset_or_key.find('=') == std::string_view::npos) {
    v = preset(preset_or_key);
  } else {
    std::string_view rest = preset_or_key;
    std::vector<std::string_view> seen;  // a repeated axis would silently take the last value
    while (!rest.empty()) {
      auto comma = rest.find(',');
      std::string_view pair = rest.substr(0, comma);
      auto eq = pair.find('=');
      if (eq == std::string_view::npos)
        throw Error("variant key: '" + std::string(pair) + "' is not axis=value");
      if (std::find(seen.begin(), seen.end(), pair.substr(0, eq)) != seen.end())
        throw Error("variant key: axis '" + std::string(pair.substr(0, eq)) + "' is given twice in '" +
                    std::string(preset_or_key) + "'");
      seen.push_back(pair.substr(0, eq));
      v.set(pair.substr(0, eq), pair.substr(eq + 1));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  for (const auto& s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos) throw Error("--set: '" + s + "' is not axis=value");
    v.set(std::string_view(s).substr(0, eq), std::string_view(s).substr(eq + 1));
  }
  v.validate();
  return v;
}

}  // namespace layoutx::model
