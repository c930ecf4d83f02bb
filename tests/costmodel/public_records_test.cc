// The public timings file's reader (costmodel/public_records.h): the shipped copy reads whole, and
// what is wrong in a record is named by file:line and key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>

#include "costmodel/public_records.h"
#include "tests/error_message.h"
#include "tests/temp_dir.h"

namespace layoutx::costmodel {
namespace {

using ::testing::HasSubstr;

const std::string kShipped = std::string(LAYOUTX_CONFIG_DIR) + "/public/public-snapdragon-timings.yaml";

std::string read_all(const std::string& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), {}};
}

// The shipped file with `from` replaced by `to` once, written to a temporary file.
std::string edited(const layoutx::test::TempDir& dir, const std::string& from, const std::string& to) {
  std::string text = read_all(kShipped);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  const std::string path = dir / "edited.yaml";
  std::ofstream(path) << text;
  return path;
}

TEST(PublicRecords, TheShippedFileReadsWhole) {
  const PublicTimings t = read_public_timings(kShipped);
  // Counted from the file itself: every "- key:" line is a record.
  const std::string text = read_all(kShipped);
  size_t keys = 0;
  for (size_t at = text.find("\n- key: "); at != std::string::npos; at = text.find("\n- key: ", at + 1)) ++keys;
  EXPECT_EQ(t.records.size(), keys);
  EXPECT_GE(t.chips.count("sm8750"), 1u);
  EXPECT_DOUBLE_EQ(*t.chips.at("sm8750").dram_peak_gbps.value, 84.8);
  EXPECT_EQ(t.chips.at("sm8750").htp_arch, "v79");
  // The X2 Elite's two variants: the lower peak is kept.
  EXPECT_DOUBLE_EQ(*t.chips.at("x2_elite").dram_peak_gbps.value, 152);
  EXPECT_EQ(t.chips.at("qcs8550_proxy").dram_peak_gbps.word, "unverified");
  const PublicModel& llama = t.models.at("llama-3.2-1b");
  EXPECT_EQ(llama.layers, 16);
  EXPECT_TRUE(*llama.tied_embeddings.value);
  // A record as published: E1's 16a8w run on SM8750, 135 tok/s, the runner's decode with host terms.
  const auto e1 = std::find_if(t.records.begin(), t.records.end(), [](const PublicRecord& r) { return r.key == "E1/qwen2.5-0.5b/16a8w"; });
  ASSERT_NE(e1, t.records.end());
  EXPECT_EQ(e1->kind, PublicKind::kDecodeRate);
  EXPECT_EQ(e1->includes, PublicIncludes::kRunnerDecodeInclHost);
  EXPECT_NEAR(*e1->ms_token(), 1000.0 / 135, 1e-9);
  EXPECT_EQ(*e1->layout.weight_bits.value, 8);
  EXPECT_EQ(e1->layout.kv_dtype, "u16");
  EXPECT_DOUBLE_EQ(*e1->rel_sd.value, 0.05);
  EXPECT_THAT(e1->cited, HasSubstr("pytorch/executorch@216a1ecc"));
  // Unknowns stay words, not values.
  for (const auto& r : t.records)
    if (r.layout.context_length.word == "unknown") EXPECT_FALSE(r.layout.context_length.known()) << r.key;
}

TEST(PublicRecords, WhatIsWrongIsNamedByLineAndKey) {
  layoutx::test::TempDir dir("public-records");
  auto fails_with = [&](const std::string& from, const std::string& to, const std::string& what) {
    const std::string msg = layoutx::testing::error_message([&] { read_public_timings(edited(dir, from, to)); });
    EXPECT_THAT(msg, HasSubstr(what)) << from << " -> " << to;
    EXPECT_TRUE(std::regex_search(msg, std::regex("edited\\.yaml:[0-9]+:[0-9]+: "))) << msg;
  };
  fails_with("  figure: {tokens_per_s: 135}", "  figure: {tokens_per_sec: 135}", "tokens_per_sec: unknown key");
  fails_with("      dtype: u16\n", "      dtype: u12\n", "'u12' is not one of u16, u8, unknown");
  fails_with("  kind: decode_rate\n", "  kind: decode_speed\n", "'decode_speed' is not one of decode_rate");
  fails_with("  chip: sm8750\n", "  chip: sm9999\n", "chip: 'sm9999' is not in the file's chips");
  fails_with("  figure: {tokens_per_s: 135}", "  figure: {}", "a decode_rate needs tokens_per_s or ms_per_token");
  fails_with("    context_length: 128\n", "    context_length: many\n", "context_length: expected a value or unknown");
  fails_with("  figure: {tokens_per_s: 135}", "  figure: {tokens_per_s: 0}", "tokens_per_s must be above 0");
}

}  // namespace
}  // namespace layoutx::costmodel
