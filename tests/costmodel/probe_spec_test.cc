// A device's probes are data (`probes:` in its YAML, costmodel/probe_spec.h): the shipped
// galaxy-s25 lists the five variants calibrate has always predicted, the CPU lists none, and a
// bad entry is an error naming the file, line and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "costmodel/device_spec.h"
#include "tests/error_message.h"

namespace layoutx::costmodel {
namespace {

const std::string kConfigs = LAYOUTX_CONFIG_DIR;

std::string s25_text() {
  std::ifstream in(kConfigs + "/devices/galaxy-s25.yaml");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(DeviceSpec, ProbesAreTheDevicesData) {
  const DeviceSpec s25 = load_device_named("galaxy-s25");
  ASSERT_EQ(s25.probes.size(), 5u);
  EXPECT_EQ(s25.probes[0].label, "sliding ring fp16");
  EXPECT_EQ(s25.probes[0].model, "spark-x2.5-1.7b");
  EXPECT_EQ(s25.probes[0].layer, model::LayerType::kSliding);
  EXPECT_EQ(s25.probes[0].context, 4096);
  EXPECT_EQ(s25.probes[0].variant.key(), model::parse_variant("returns=new_entry,join=keys,precision=fp16").key());
  EXPECT_EQ(s25.probes[4].label, "full 4096 w8a16, cache in u16");
  EXPECT_TRUE(s25.probes[4].cache_in_u16);
  EXPECT_FALSE(s25.probes[3].cache_in_u16);
  // The hypotheses' copies of the spec carry them (calibrate reads them from a fit's device).
  EXPECT_EQ(with_hypothesis(s25, s25.hypotheses[1]).probes.size(), 5u);
  EXPECT_TRUE(load_device_named("onnxruntime-cpu").probes.empty());
}

TEST(DeviceSpec, ABadProbeNamesTheFileLineAndKey) {
  std::string text = s25_text();
  const size_t at = text.find("\nprobes:\n");
  ASSERT_NE(at, std::string::npos);
  const int line = static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at) + 1, '\n')) + 2;
  text.insert(at + 9,
              "  - {label: a, model: m, layer: middle, ctx: 1, variant: \"nope=1\", colour: red}\n");
  const std::string e = testing::error_message([&] { load_device_text(text, "s25.yaml"); });
  const std::string l = "s25.yaml:" + std::to_string(line) + ":";
  EXPECT_NE(e.find(l), std::string::npos) << l << "\n" << e;
  for (const char* key : {"probes[0].layer: ", "probes[0].ctx: ", "probes[0].variant: ", "probes[0].colour"})
    EXPECT_NE(e.find(key), std::string::npos) << key << "\n" << e;
  // Two probes with one label would be two columns of one name.
  std::string twice = s25_text();
  twice.insert(twice.find("\nprobes:\n") + 9,
               "  - {label: sliding ring fp16, model: m, layer: full, ctx: 512, variant: ring}\n");
  EXPECT_NE(testing::error_message([&] { load_device_text(twice, "s25.yaml"); })
                .find("probes[1].label: 'sliding ring fp16' is the label of an earlier probe"),
            std::string::npos);
}

}  // namespace
}  // namespace layoutx::costmodel
