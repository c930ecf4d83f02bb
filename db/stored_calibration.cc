#include "db/stored_calibration.h"

namespace layoutx::db {

std::optional<StoredCalibration> latest_calibration(Connection& c, const std::string& device) {
  // Latest by the time it was stored; the id breaks ties within one second (deterministic).
  auto q = c.prepare(
      "SELECT k.id, d.name, k.created_at, k.coefficients, k.provenance FROM calibrations k "
      "JOIN devices d ON d.id = k.device_id WHERE d.name = ?1 ORDER BY k.created_at DESC, k.id DESC LIMIT 1");
  q.bind(1, device);
  if (!q.step()) return std::nullopt;
  return StoredCalibration{q.text(0), q.text(1), q.text(2), q.text(3), q.text(4)};
}

}  // namespace layoutx::db
