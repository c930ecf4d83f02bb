// SHA-256 (FIPS 180-4), written here: the content hash that makes ingest idempotent.
#pragma once
#include <string>
#include <string_view>

namespace layoutx::db {

// Lower-case hex digest (64 characters) of the bytes of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace layoutx::db
