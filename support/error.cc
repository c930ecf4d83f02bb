#include "support/error.h"

namespace layoutx {

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
