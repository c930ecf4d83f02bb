// The keys built from a layer spec's fields cover every field (model/layer_fields.h): changing any
// one field changes the key, except the fields a key names as left out.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "model/layer_fields.h"
#include "model/model_loader.h"

namespace layoutx::model {
namespace {

// Another value of the field: booleans flipped, enums moved to their other first value, numbers + 1.
template <typename T>
void change(T& x) {
  if constexpr (std::is_same_v<T, bool>) {
    x = !x;
  } else if constexpr (std::is_enum_v<T>) {
    x = static_cast<T>(static_cast<int>(x) == 0 ? 1 : 0);
  } else {
    x = x + 1;
  }
}

std::vector<std::string> field_names() {
  LayerSpec l;
  std::vector<std::string> names;
  for_each_layer_field(l, [&](const char* name, auto&) { names.push_back(name); });
  return names;
}

// `l` with the i-th field (for_each_layer_field's order) changed.
LayerSpec with_field_changed(LayerSpec l, size_t i) {
  size_t at = 0;
  for_each_layer_field(l, [&](const char*, auto& x) {
    if (at++ == i) change(x);
  });
  return l;
}

TEST(LayerFields, EveryFieldIsVisitedOnceUnderItsOwnName) {
  const auto names = field_names();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const char* n : {"type", "context", "cache_entries", "rope.theta", "rope.original_context", "head_gate",
                        "structure.norm", "structure.attn_softcap"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(LayerFields, ChangingAnyFieldChangesTheKey) {
  const LayerSpec spark = load_model(kDefaultModel).layer(LayerType::kFull, 1024);
  const auto names = field_names();
  for (size_t i = 0; i < names.size(); ++i)
    EXPECT_NE(layer_key(with_field_changed(spark, i)), layer_key(spark)) << names[i] << " does not reach the key";
}

TEST(LayerFields, AFieldLeftOutOfTheKeyDoesNotChangeItAndTheOthersStillDo) {
  const LayerSpec spark = load_model(kDefaultModel).layer(LayerType::kSliding, 1024);
  const auto names = field_names();
  for (size_t i = 0; i < names.size(); ++i) {
    const bool left_out = names[i] == "context";
    EXPECT_EQ(layer_key(with_field_changed(spark, i), {"context"}) == layer_key(spark, {"context"}), left_out) << names[i];
  }
}

}  // namespace
}  // namespace layoutx::model
