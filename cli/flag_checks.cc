#include "cli/flag_checks.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

#include "model/variant.h"
#include "support/error.h"

namespace layoutx::cli {

namespace {
std::string shown(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        const std::string want = "must be an integer in " + range + ", got '" + text + "'";
        if (text.empty()) return want;
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (end != text.c_str() + text.size()) return want;
        if (errno == ERANGE || v < lo || v > hi) return want;
        return "";
      },
      "INT in " + range, "integer_in");
}

CLI::Validator number_in(double lo, double hi) {
  const std::string range = "[" + shown(lo) + ", " + shown(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        const std::string want = "must be a finite number in " + range + ", got '" + text + "'";
        // Decimal only, the whole text with an optional sign: from_chars, unlike strtod, takes no
        // hex ("0x1") and no leading blanks, and no '+' (skipped here unless a sign follows it).
        const bool plus = text.size() > 1 && text[0] == '+' && text[1] != '+' && text[1] != '-';
        const char* first = text.data() + (plus ? 1 : 0);
        const char* last = text.data() + text.size();
        double v = 0;
        const auto [end, ec] = std::from_chars(first, last, v, std::chars_format::general);
        if (first == last || ec != std::errc() || end != last || !std::isfinite(v) || v < lo || v > hi) return want;
        return "";
      },
      "NUMBER in " + range, "number_in");
}

CLI::Validator precision_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          model::parse_precision(text);
          return "";
        } catch (const Error&) {
          std::string names;
          for (const auto& v : model::axis_values("precision")) names += (names.empty() ? "" : ", ") + v;
          return "must be one of " + names + ", got '" + text + "'";
        }
      },
      "PRECISION", "precision_name");
}

CLI::Option* add_seed_option(CLI::App& app, uint64_t& seed, const std::string& what) {
  return app.add_option("--seed", seed, "seed of " + what)
      ->capture_default_str()
      ->check(integer_in(0, std::numeric_limits<int64_t>::max()));
}

}  // namespace layoutx::cli
