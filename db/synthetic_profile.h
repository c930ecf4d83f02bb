// Synthetic qnn-profile-viewer CSV of any size, for the ingest benchmark and the concurrency
// tests (names and numbers generated here; the shape is profile-formats.md's).
#pragma once
#include <cstdint>
#include <string>

namespace layoutx::db {

// `inferences` EXECUTE groups, each with graph-level rows and `ops_per_inference` per-op rows in
// cycles. `seed` varies the numbers (and so the content hash).
std::string synthetic_qnn_csv(int inferences, int ops_per_inference, uint32_t seed);

}  // namespace layoutx::db
