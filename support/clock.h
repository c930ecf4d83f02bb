// The wall clock as the database and the calibrations record it.
#pragma once
#include <string>

namespace layoutx {

// Current UTC time, ISO-8601 to the second ("2026-12-02T12:34:56Z").
std::string utc_now();

}  // namespace layoutx
