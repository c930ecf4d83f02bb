#include "cli/json_flag.h"

namespace layoutx::cli {

void add_json_flag(CLI::App& verb) { verb.add_flag(kJsonFlag, kJsonHelp); }

bool json_requested(const CLI::App& verb) {
  const CLI::Option* o = verb.get_option_no_throw(kJsonFlag);
  return o != nullptr && o->count() > 0;
}

}  // namespace layoutx::cli
