#include "db/known_names.h"

#include <algorithm>

#include "support/error.h"

namespace layoutx::db {

namespace {

std::vector<std::string> names(Connection& c, const std::string& sql) {
  std::vector<std::string> out;
  auto q = c.prepare(sql);
  while (q.step()) out.push_back(q.text(0));
  return out;
}

void require_one(Connection& c, const std::string& flag, const std::string& name, const std::vector<std::string>& known) {
  if (name.empty() || std::find(known.begin(), known.end(), name) != known.end()) return;
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  throw Error(flag + ": no measurements of '" + name + "' in " + c.path() + " (known: " +
              (list.empty() ? "none, the database holds no layer measurements" : list) + ")");
}

}  // namespace

std::vector<std::string> measured_devices(Connection& c) {
  return names(c, "SELECT name FROM devices WHERE id IN (SELECT DISTINCT device_id FROM layer_measurements) ORDER BY name");
}

std::vector<std::string> measured_models(Connection& c) {
  return names(c, "SELECT name FROM models WHERE id IN (SELECT DISTINCT model_id FROM layer_measurements) ORDER BY name");
}

void require_known(Connection& c, const std::string& device, const std::string& model) {
  require_one(c, "--device", device, measured_devices(c));
  require_one(c, "--model", model, measured_models(c));
}

}  // namespace layoutx::db
