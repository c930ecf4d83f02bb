// The devices and models a database has measurements of, for the gates' "unknown device" and
// "unknown model" errors (a typo in a CI job must fail, not report "0 keys, 0 regressed").
#pragma once
#include <string>
#include <vector>

#include "db/sqlite.h"

namespace layoutx::db {

// Names with at least one layer measurement, sorted.
std::vector<std::string> measured_devices(Connection& c);
std::vector<std::string> measured_models(Connection& c);

// Throws Error when `device` / `model` (each "" = any) has no measurement in the database,
// listing the known ones: "--device: no measurements of 'nope' in DB (known: galaxy-s25)".
void require_known(Connection& c, const std::string& device, const std::string& model);

}  // namespace layoutx::db
