// The device job bundle: files, job.yaml contents, calibration inputs (raw, once), and scripts
// that at least parse (they cannot run here: no AI Hub account, QNN SDK or phone).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <cstdio>
#include <fstream>

#include "costmodel/device_spec.h"
#include "emit/bundle.h"
#include "emit/subprocess.h"
#include "emit/tensor_files.h"
#include "model/builder.h"
#include "model/numerics/weights.h"
#include "support/error.h"
#include "support/yaml_reader.h"
#include "tests/emit/small_layers.h"
#include "tests/temp_dir.h"

namespace layoutx::emit {
namespace {

namespace fs = std::filesystem;
using model::LayerType;

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

struct Written {
  model::LayerGraph g;
  BundleFiles files;
  BundleOptions opt;
};

Written write(const std::string& layout, model::Precision p, int samples) {
  const auto L = testing::small_layer(LayerType::kSliding);
  auto g = model::build_layer_graph(L, model::preset(layout, p));
  auto w = model::numerics::seeded_weights(L, 3);
  BundleOptions opt = device_bundle_options(costmodel::load_device_named("galaxy-s25"));
  opt.model_name = "small-test";
  opt.weights_description = "seeded: 3";
  opt.calibration_samples = samples;
  static const layoutx::test::TempDir root("bundle-test");  // removed at exit
  auto dir = root.path() / (layout + to_string(p));
  fs::remove_all(dir);
  auto files = write_bundle(g, w, dir.string(), opt);
  return {std::move(g), files, opt};
}

TEST(Bundle, WritesTheOnnxJobScriptsAndCalibration) {
  auto b = write("ring", model::Precision::kW4A16, 3);
  EXPECT_EQ(fs::path(b.files.onnx).filename(), "sliding_ring_w4a16.onnx");
  for (const auto& f : {b.files.onnx, b.files.job, b.files.aihub_script, b.files.qnn_script}) EXPECT_TRUE(fs::exists(f)) << f;
  ASSERT_EQ(b.files.calibration.size(), 3u);
  // input_list.txt: one line per sample, every graph input named.
  std::string list = slurp(b.files.dir + "/calibration/input_list.txt");
  EXPECT_EQ(std::count(list.begin(), list.end(), '\n'), 3);
  EXPECT_NE(list.find("k_cache:=calibration/sample_002/k_cache.bin"), std::string::npos);
}

TEST(Bundle, JobFileNamesTheVariantDeviceAndInputSpecs) {
  auto b = write("ring", model::Precision::kW4A16, 2);
  YAML::Node j = load_yaml_file(b.files.job);
  EXPECT_EQ(j["variant_key"].as<std::string>(), b.g.variant.key());
  EXPECT_EQ(j["precision"].as<std::string>(), "w4a16");
  EXPECT_EQ(j["layer"].as<std::string>(), "sliding");
  EXPECT_EQ(j["ctx"].as<int>(), 32);
  EXPECT_EQ(j["device"].as<std::string>(), "Samsung Galaxy S25");
  EXPECT_EQ(j["db_device"].as<std::string>(), "galaxy-s25");
  EXPECT_EQ(j["htp_arch"].as<std::string>(), "v79");
  EXPECT_EQ(j["vtcm_mb"].as<double>(), 8);
  EXPECT_EQ(j["quantization"]["weights"].as<std::string>(), "int4");
  ASSERT_EQ(j["inputs"].size(), 6u);
  EXPECT_EQ(j["inputs"][1]["name"].as<std::string>(), "k_cache");
  EXPECT_EQ(j["inputs"][1]["shape"].as<std::vector<int64_t>>(), (std::vector<int64_t>{2, 16, 7}));
  EXPECT_EQ(j["outputs"][1]["shape"].as<std::vector<int64_t>>(), (std::vector<int64_t>{2, 16, 1}));
  // The profile that comes back is ingested against exactly this variant.
  EXPECT_EQ(j["ingest"]["aihub"].as<std::string>(), ingest_command(b.g, b.opt, "profile_aihub.json"));
  EXPECT_NE(j["ingest"]["aihub"].as<std::string>().find("--variant " + b.g.variant.key()), std::string::npos);
}

TEST(Bundle, CalibrationSamplesAreTheSimulatedHistorysInputs) {
  auto b = write("ring", model::Precision::kW8A16, 2);
  auto s0 = read_tensors(b.files.calibration[0]);
  auto s1 = read_tensors(b.files.calibration[1]);
  // Step 0: every cache slot unwritten, masked with the quantized graphs' -100; step 1: slot 0 written.
  for (int j = 0; j < 7; ++j) EXPECT_EQ(s0.at("mask").data[j], -100.f) << j;
  EXPECT_EQ(s0.at("mask").data[7], 0.f);
  EXPECT_EQ(s1.at("mask").data[0], 0.f);
  EXPECT_EQ(s1.at("mask").data[1], -100.f);
}

TEST(Bundle, EachTensorIsStoredOnceAndItsSizeIsKnownBeforehand) {
  auto b = write("ring", model::Precision::kW8A16, 3);
  // Raw float32 only (a .npy copy of every tensor used to double the bundle: 8.2 GB at 65536 tokens).
  int64_t sample_bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(b.files.calibration[1])) {
    EXPECT_NE(e.path().extension(), ".npy") << e.path();
    if (e.path().extension() == ".bin") sample_bytes += static_cast<int64_t>(e.file_size());
  }
  const BundleSize size = bundle_size(b.g, 3);
  EXPECT_EQ(size.per_sample, sample_bytes);
  // The ONNX: its float32 weights, within the few KB of norms, biases and framing not counted.
  const auto onnx = static_cast<int64_t>(fs::file_size(b.files.onnx));
  EXPECT_GE(onnx, size.onnx);
  EXPECT_LT(onnx - size.onnx, 16 * 1024) << onnx << " vs " << size.onnx;
}

TEST(Bundle, AboveTheCapIsRefusedNamingWhatFits) {
  BundleSize big;
  big.per_sample = 537'000'000;
  big.onnx = 210'000'000;
  big.samples = 8;
  try {
    check_bundle_sizes({big}, "--calibration-samples");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "the bundle would take 4.51 GB (8 calibration samples of 0.54 GB each, the ONNX 0.21 GB), above the cap "
              "of 2.15 GB (README, \"Limits\"); give --calibration-samples 3 or fewer, or a shorter context");
  }
  big.samples = 3;
  EXPECT_NO_THROW(check_bundle_sizes({big}, "--calibration-samples"));
}

TEST(Bundle, TheAiHubScriptReadsTheRawSamples) {
  auto b = write("ring", model::Precision::kW8A16, 2);
  // The script's own calibration_data(), with a stand-in for the qai_hub client (not installed here).
  const std::string probe =
      "import sys, types; sys.modules['qai_hub'] = types.ModuleType('qai_hub'); import runpy; "
      "d = runpy.run_path(sys.argv[1], run_name='probe')['calibration_data'](); "
      "k = d['k_cache'][1]; print('%s %.9g %.9g' % (k.shape, k.ravel()[5], d['mask'][1].ravel()[1]))";
  // Debian's python3 (python3-numpy, scripts/setup --test), as CMake picks it; another on PATH may lack NumPy.
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  auto r = run_command({python, "-c", probe, b.files.aihub_script});
  if (r.status != 0 && r.err.find("No module named 'numpy'") != std::string::npos) GTEST_SKIP() << "no NumPy";
  ASSERT_EQ(r.status, 0) << r.err;
  const auto s1 = read_tensors(b.files.calibration[1]);
  char want[128];
  std::snprintf(want, sizeof want, "(2, 16, 7) %.9g %.9g", s1.at("k_cache").data[5], s1.at("mask").data[1]);
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), want);
}

TEST(Bundle, ScriptsParse) {
  auto b = write("roll", model::Precision::kFp16, 1);
  auto sh = run_command({"bash", "-n", b.files.qnn_script});
  EXPECT_EQ(sh.status, 0) << sh.err;
  // The QNN script targets the device spec's HTP: its arch, its libraries, its VTCM.
  const std::string qnn = slurp(b.files.qnn_script);
  EXPECT_NE(qnn.find(R"("vtcm_mb": 8, "O": 3}], "devices": [{"dsp_arch": "v79"}])"), std::string::npos) << qnn;
  EXPECT_NE(qnn.find("lib/aarch64-android/libQnnHtpV79Stub.so"), std::string::npos);
  EXPECT_NE(qnn.find("lib/hexagon-v79/unsigned/libQnnHtpV79Skel.so"), std::string::npos);
  for (const char* key : {"@SOC@", "@HTP_ARCH@", "@HTP_ARCH_UPPER@", "@VTCM_MB@", "@DEVICE@"})
    EXPECT_EQ(qnn.find(key), std::string::npos) << "an unfilled template placeholder " << key;
  const std::string py = slurp(b.files.aihub_script);
  EXPECT_NE(py.find("hub.submit_compile_job("), std::string::npos);
  EXPECT_NE(py.find("--target_runtime qnn_context_binary"), std::string::npos);
  EXPECT_EQ(py.find('@'), std::string::npos) << "an unfilled template placeholder";
  auto py_check = run_command({"python3", "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())", b.files.aihub_script});
  if (py_check.status != 127) {
    EXPECT_EQ(py_check.status, 0) << py_check.err;
  }
}

TEST(Bundle, ADeviceWithoutAnHtpHasNoBundle) {
  try {
    device_bundle_options(costmodel::load_device_named("onnxruntime-cpu"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("onnxruntime-cpu is not an HTP device a job bundle can target (missing: "
                                         "identity.htp_arch identity.aihub_device vtcm_mb)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace layoutx::emit
