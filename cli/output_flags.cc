#include "cli/output_flags.h"

#include "db/dialect.h"
#include "support/error.h"
#include "support/output_target.h"

namespace layoutx::cli {

namespace {
// A CLI11 validator from a check that throws Error; CLI11 prefixes the flag's name.
template <typename Check>
CLI::Validator validator(Check check, const std::string& what) {
  return CLI::Validator(
      [check](std::string& path) -> std::string {
        try {
          check(path);
        } catch (const Error& e) {
          return e.what();
        }
        return "";
      },
      what, what);
}
}  // namespace

CLI::Validator output_file() {
  return validator([](const std::string& p) { check_file_target(p); }, "FILE");
}

CLI::Validator output_folder() {
  return validator([](const std::string& p) { check_folder_target(p, /*replace=*/true); }, "DIR");
}

CLI::Validator output_database() {
  return validator(
      [](const std::string& p) {
        if (!db::is_postgres_target(p)) check_file_target(p);
      },
      "DB");
}

CLI::Option* add_force_flag(CLI::App& app, bool& force, const std::string& flag) {
  return app.add_flag("--force", force, "replace the contents of a non-empty " + flag + " folder");
}

}  // namespace layoutx::cli
