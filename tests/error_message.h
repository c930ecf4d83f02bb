// Test helper: the message of the layoutx::Error that `f()` throws, or "" if it throws none.
#pragma once
#include <string>

#include "support/error.h"

namespace layoutx::testing {

template <typename F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace layoutx::testing
