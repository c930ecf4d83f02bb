#include "support/error.h"

#include <cstdio>

namespace layoutx {

std::string Error::visible_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t') {
      out += ch;
    } else if (c == 0) {
      out += "\\0";
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

void ErrorList::throw_if_any() const {
  if (messages_.empty()) return;
  std::string joined;
  for (size_t i = 0; i < messages_.size(); ++i) {
    if (i) joined += '\n';
    joined += messages_[i];
  }
  throw Error(joined);
}

}  // namespace layoutx
