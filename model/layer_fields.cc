#include "model/layer_fields.h"

#include <algorithm>
#include <charconv>
#include <type_traits>

namespace layoutx::model {

std::string layer_key(const LayerSpec& l, std::initializer_list<std::string_view> except) {
  std::string k;
  k.reserve(192);
  for_each_layer_field(l, [&](std::string_view name, const auto& x) {
    if (std::find(except.begin(), except.end(), name) != except.end()) return;
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_enum_v<T>) {
      k += to_string(x);
    } else if constexpr (std::is_same_v<T, bool>) {
      k += x ? '1' : '0';
    } else {  // int or double; std::to_chars: no locale, no allocation, shortest exact form
      char buf[32];
      k.append(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
    }
    k += '/';
  });
  return k;
}

}  // namespace layoutx::model
