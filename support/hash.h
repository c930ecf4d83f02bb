// A stable string hash for ids and file names (std::hash is not stable across builds, so nothing
// saved or shown may use it): FNV-1a's steps on 64 bits, from the offset basis the first saved
// ids were made with, 1469598103934665603 (a digit short of the published 14695981039346656037).
// Every saved calibration id and source hash depends on it: do not "fix" it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace layoutx {

uint64_t fnv1a(std::string_view s);
// The low `digits` hex digits of v (1..16), zero-padded: hex(0xab, 4) == "00ab".
std::string hex(uint64_t v, int digits);
// A number as hashed text ("%.9g"): the digits every saved id and source hash spells it with.
std::string hash_number(double v);

}  // namespace layoutx
