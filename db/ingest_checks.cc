#include "db/ingest_checks.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "model/model_loader.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::db {

namespace {
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

std::vector<std::string> known_model_names() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(config_path("models"), ec)) {
    const std::string f = e.path().filename().string();
    const std::string suffix = ".yaml", weights = ".weights.yaml";
    if (f.size() <= suffix.size() || f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    if (f.size() > weights.size() && f.compare(f.size() - weights.size(), weights.size(), weights) == 0) continue;
    out.push_back(f.substr(0, f.size() - suffix.size()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_layer_rows(const std::vector<LayerRowToStore>& rows, const std::string& name) {
  ErrorList errors;
  const std::vector<std::string> known = known_model_names();
  std::string known_list;
  for (const auto& k : known) known_list += (known_list.empty() ? "" : ", ") + k;
  std::map<std::string, std::optional<int>> window_of;  // model -> sliding window (loaded once)
  for (const auto& r : rows) {
    const std::string at = name + (r.line > 0 ? ":" + std::to_string(r.line) : "") + ": ";
    // 1. The timing: one layer's decode step, in ms.
    if (!(r.ms > 0.0 && r.ms <= kMaxLayerMs))  // also refuses NaN
      errors.add(at + "ms: must be in (0, " + std::to_string(static_cast<int>(kMaxLayerMs)) + "] (one layer's decode step), got " + num(r.ms));
    // 2. The model.
    if (std::find(known.begin(), known.end(), r.model) == known.end()) {
      errors.add(at + "model: unknown model '" + r.model + "' (known: " + known_list + ")");
      continue;
    }
    // 3. The context: in range, and a sliding layer's at least its window.
    if (r.ctx && (*r.ctx < model::limits::kMinContext || *r.ctx > model::limits::kMaxContext))
      errors.add(at + "context: must be in [" + std::to_string(model::limits::kMinContext) + ", " +
                 std::to_string(model::limits::kMaxContext) + "], got " + std::to_string(*r.ctx));
    if (r.layer_type != "sliding") continue;
    auto w = window_of.find(r.model);
    if (w == window_of.end()) w = window_of.emplace(r.model, model::load_model(r.model).sliding_window).first;
    if (w->second && r.ctx && *r.ctx >= model::limits::kMinContext && *r.ctx < *w->second)
      errors.add(at + "context: " + std::to_string(*r.ctx) + " is below the sliding window of " + r.model + " (" +
                 std::to_string(*w->second) + " tokens); a sliding layer only differs from a full one once the context exceeds it");
    // 4. A sliding layer's cache covers its window minus the current token.
    if (!r.cache_entries) continue;
    if (w->second && *r.cache_entries < *w->second - 1)
      errors.add(at + "cache_entries: " + std::to_string(*r.cache_entries) + " is below the sliding window - 1 (" +
                 std::to_string(*w->second - 1) + ") of " + r.model);
  }
  errors.throw_if_any();
}

}  // namespace layoutx::db
