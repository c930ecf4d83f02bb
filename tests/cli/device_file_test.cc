// A device is a YAML file (issue #12): a copy of configs/devices/galaxy-s25.yaml under another
// name, with another VTCM and HTP architecture, given as --device PATH to select, predict, emit
// and next; every output names the new device and its bundle targets its arch and VTCM. Bad
// device files and unknown names exit 2 naming the file and the key.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli/run_layoutx.h"
#include "tests/temp_dir.h"

namespace {

using layoutx::test::has;
using layoutx::test::layoutx;
using layoutx::test::Result;

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Replaces the one line starting with `prefix` (after leading spaces) in `text`.
std::string replace_line(std::string text, const std::string& prefix, const std::string& line) {
  const size_t at = text.find("\n" + prefix);
  EXPECT_NE(at, std::string::npos) << prefix;
  if (at == std::string::npos) return text;
  const size_t end = text.find('\n', at + 1);
  return text.replace(at + 1, end - at - 1, line);
}

class DeviceFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string y = slurp(std::string(LAYOUTX_CONFIG_DIR) + "/devices/galaxy-s25.yaml");
    y = replace_line(y, "name: ", "name: pixel-test");
    y = replace_line(y, "vtcm_mb: ", "vtcm_mb: 6");
    y = replace_line(y, "  device: ", "  device: Test Pixel");
    y = replace_line(y, "  aihub_device: ", "  aihub_device: Google Pixel Test (Family)");
    y = replace_line(y, "  htp_arch: ", "  htp_arch: v75");
    device_ = tmp_ / "pixel.yaml";
    std::ofstream(device_) << y;
  }
  layoutx::test::TempDir tmp_{"device"};
  std::string device_;
  const std::string tiny_ = std::string("--model ") + LAYOUTX_TEST_DIR + "/fixtures/numerics/tiny-model.yaml";
};

TEST_F(DeviceFile, SelectPredictEmitAndNextRunOnACopiedDevice) {
  // predict: the copy's calibration files are the configs folder's (galaxy-s25's data); the saved
  // calibration is galaxy-s25's, so it refits in memory and says so.
  Result p = layoutx("predict --device " + device_ + " --layout ring --json");
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_TRUE(has(p.out, "\"device\": \"pixel-test\"")) << p.out;
  EXPECT_TRUE(has(p.out, "shipped hypotheses fitted in memory on configs/calibration/spark-s25-measurements.yaml")) << p.out;
  // select: the table, the JSON and the layout file name it.
  const std::string layout = tmp_ / "layout.yaml";
  Result s = layoutx("select --device " + device_ + " --ctx 1024 --no-fidelity --out " + layout);
  ASSERT_EQ(s.status, 0) << s.out;
  EXPECT_TRUE(has(s.out, "on pixel-test, calibration")) << s.out;
  EXPECT_TRUE(has(slurp(layout), "device: pixel-test")) << slurp(layout);
  Result sj = layoutx("select --device " + device_ + " --ctx 1024 --no-fidelity --json");
  ASSERT_EQ(sj.status, 0) << sj.out;
  EXPECT_TRUE(has(sj.out, "\"device\": \"pixel-test\"")) << sj.out;
  // emit: job.yaml and the scripts target the copy: its AI Hub name, HTP arch and VTCM.
  const std::string out = tmp_ / "bundle";
  Result e = layoutx("emit --device " + device_ + " " + tiny_ + " --ctx 64 --layout ring --calibration-samples 1 --out " + out);
  ASSERT_EQ(e.status, 0) << e.out;
  std::string job, qnn, aihub;
  for (const auto& f : std::filesystem::recursive_directory_iterator(out)) {
    if (f.path().filename() == "job.yaml") job = slurp(f.path().string());
    if (f.path().filename() == "qnn_sdk.sh") qnn = slurp(f.path().string());
    if (f.path().filename() == "submit_aihub.py") aihub = slurp(f.path().string());
  }
  EXPECT_TRUE(has(job, "device: Test Pixel\n")) << job;
  EXPECT_TRUE(has(job, "db_device: pixel-test\n")) << job;
  EXPECT_TRUE(has(job, "htp_arch: v75\n")) << job;
  EXPECT_TRUE(has(job, "vtcm_mb: 6\n")) << job;
  EXPECT_TRUE(has(job, "--device pixel-test")) << job;  // the ingest line
  EXPECT_TRUE(has(qnn, "\"vtcm_mb\": 6, \"O\": 3}], \"devices\": [{\"dsp_arch\": \"v75\"}]")) << qnn;
  EXPECT_TRUE(has(qnn, "lib/aarch64-android/libQnnHtpV75Stub.so")) << qnn;
  EXPECT_TRUE(has(qnn, "lib/hexagon-v75/unsigned/libQnnHtpV75Skel.so")) << qnn;
  EXPECT_FALSE(has(qnn, "v79")) << qnn;
  EXPECT_TRUE(has(aihub, "DEVICE = \"Google Pixel Test (Family)\"")) << aihub;
  // next: the plan names the device, its bundles target it.
  const std::string plan = tmp_ / "plan";
  Result n = layoutx("next --device " + device_ + " " + tiny_ + " --ctx 64 --no-fidelity --budget 1 --out " + plan);
  ASSERT_EQ(n.status, 0) << n.out;
  EXPECT_TRUE(has(slurp(plan + "/plan.yaml"), "device: pixel-test\n")) << slurp(plan + "/plan.yaml");
  int arch = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(plan))
    if (f.path().filename() == "job.yaml") arch += has(slurp(f.path().string()), "htp_arch: v75\n");
  EXPECT_EQ(arch, 1);
}

// The copy given its own calibration paths: `calibrate --update-shipped` writes its calibration
// and its hypotheses file (one hypotheses document), says where, and the verbs then load it
// without refitting.
TEST_F(DeviceFile, UpdateShippedWritesTheHypothesesFileTheVerbsThenLoad) {
  const std::string saved = tmp_ / "pixel.calibration.yaml", hyps = tmp_ / "pixel.hypotheses.yaml";
  std::string y = slurp(device_);
  y = replace_line(y, "  saved: ", "  saved: " + saved);
  y = replace_line(y, "  hypotheses: ", "  hypotheses: " + hyps);
  std::ofstream(device_) << y;
  Result c = layoutx("calibrate --device " + device_ + " --update-shipped");
  ASSERT_EQ(c.status, 0) << c.out;
  // "hypotheses: the K kept of N written to FILE": K of the device's N, then K loaded back.
  const std::string said = "hypotheses: the ";
  const size_t at = c.out.find(said);
  ASSERT_NE(at, std::string::npos) << c.out;
  const int kept = std::stoi(c.out.substr(at + said.size()));
  const size_t of = c.out.find(" kept of ", at);
  ASSERT_NE(of, std::string::npos) << c.out;
  const int tried = std::stoi(c.out.substr(of + 9));
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, tried);
  EXPECT_TRUE(has(c.out, std::to_string(kept) + " kept of " + std::to_string(tried) + " written to " + hyps)) << c.out;
  EXPECT_EQ(slurp(hyps).rfind("hypotheses_document: 1\n", 0), 0u);
  Result p = layoutx("predict --device " + device_ + " --layout ring --json");
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_TRUE(has(p.out, "\"calibration_source\": \"shipped hypotheses " + hyps + ", " + std::to_string(kept) + " kept"))
      << p.out;
}

// A renamed copy still naming galaxy-s25's calibration files: the "refitting in memory" line does
// not advise a plain `--update-shipped` (which would refuse, or save galaxy-s25's): it says the
// files are galaxy-s25's and to give the copy its own paths; --update-shipped refuses at once
// with the same words and leaves galaxy-s25's files as they were. (Before: the advice read
// "run `layoutx calibrate --update-shipped` to save", and the refusal came after the fit.)
TEST_F(DeviceFile, ACopysSaveAdviceAndUpdateShippedAgree) {
  Result p = layoutx("predict --device " + device_ + " --layout ring");
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_FALSE(has(p.out, "(run `layoutx calibrate --update-shipped` to save)")) << p.out;
  const std::string advice = "is the calibration of 'galaxy-s25', not of 'pixel-test': give " + device_ +
                             " its own calibration.saved and calibration.hypotheses paths, then run `layoutx calibrate --device " +
                             device_ + " --update-shipped` to save";
  EXPECT_TRUE(has(p.out, advice)) << p.out;
  const std::string shipped = std::string(LAYOUTX_CONFIG_DIR) + "/calibration/galaxy-s25.calibration.yaml";
  const std::string before = slurp(shipped);
  const auto t0 = std::chrono::steady_clock::now();
  Result c = layoutx("calibrate --device " + device_ + " --update-shipped");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(c.status, 2) << c.out;
  EXPECT_TRUE(has(c.out, "--update-shipped: ")) << c.out;
  EXPECT_TRUE(has(c.out, advice)) << c.out;
  EXPECT_FALSE(has(c.out, "leave-one-out")) << c.out;  // refused before the fit, nothing printed
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(slurp(shipped), before);
  // Given its own paths, the advice names the copy's device file.
  const std::string saved = tmp_ / "own.calibration.yaml", hyps = tmp_ / "own.hypotheses.yaml";
  std::string y = slurp(device_);
  y = replace_line(y, "  saved: ", "  saved: " + saved);
  y = replace_line(y, "  hypotheses: ", "  hypotheses: " + hyps);
  std::ofstream(device_) << y;
  Result own = layoutx("predict --device " + device_ + " --layout ring");
  ASSERT_EQ(own.status, 0) << own.out;
  EXPECT_TRUE(has(own.out, "(run `layoutx calibrate --device " + device_ + " --update-shipped` to save)")) << own.out;
}

// The probes calibrate predicts are the device's data (`probes:`, costmodel/probe_spec.h): a copy
// of galaxy-s25 lists them and prints them; the same copy without its `probes:` block prints no
// probe table, in text or JSON (before, the Spark probes were hard-coded and printed for any device).
TEST_F(DeviceFile, CalibratePrintsTheProbesTheDeviceLists) {
  Result with = layoutx("calibrate --device " + device_);
  ASSERT_EQ(with.status, 0) << with.out;
  EXPECT_TRUE(has(with.out, "predictions of unmeasured variants")) << with.out;
  EXPECT_TRUE(has(with.out, "full 4096 w8a16, cache in u16")) << with.out;
  std::string y = slurp(device_);
  const size_t from = y.find("\nprobes:\n"), to = y.find("\n\n", from);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  y.erase(from + 1, to - from);
  const std::string none = tmp_ / "no-probes.yaml";
  std::ofstream(none) << y;
  Result t = layoutx("calibrate --device " + none);
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_TRUE(has(t.out, "hypotheses (")) << t.out;  // the hypothesis report is there
  EXPECT_FALSE(has(t.out, "predictions of unmeasured variants")) << t.out;
  EXPECT_FALSE(has(t.out, "sliding ring fp16")) << t.out;
  Result j = layoutx("calibrate --json --device " + none);
  ASSERT_EQ(j.status, 0) << j.out;
  EXPECT_TRUE(has(j.out, "\"hypotheses\": {")) << j.out;
  EXPECT_FALSE(has(j.out, "\"probes\"")) << j.out;
}

TEST_F(DeviceFile, UnknownNamesAndBadFilesExitTwoNamingTheFileAndKey) {
  Result u = layoutx("select --device pixel --ctx 1024 --no-fidelity");
  EXPECT_EQ(u.status, 2);
  EXPECT_TRUE(has(u.out, "--device: unknown device 'pixel' (known: galaxy-s25, onnxruntime-cpu; or give the path of a device .yaml)"))
      << u.out;
  Result ue = layoutx("emit --device pixel " + tiny_ + " --ctx 64 --out " + (tmp_ / "x"));
  EXPECT_EQ(ue.status, 2);
  EXPECT_TRUE(has(ue.out, "--device: unknown device 'pixel'")) << ue.out;
  // A misspelt key inside identity: the file, line and column, the key, the allowed ones.
  std::string y = slurp(device_);
  const std::string bad = tmp_ / "bad.yaml";
  std::ofstream(bad) << replace_line(y, "  htp_arch: ", "  htp_arhc: v75");
  Result b = layoutx("predict --device " + bad);
  EXPECT_EQ(b.status, 2);
  EXPECT_TRUE(has(b.out, bad + ":")) << b.out;
  EXPECT_TRUE(has(b.out, "identity.htp_arhc: unknown key (allowed: ")) << b.out;
  // An unknown timing boundary.
  const std::string bound = tmp_ / "boundary.yaml";
  std::ofstream(bound) << replace_line(y, "boundaries: ", "boundaries: [ours, aihub]");
  Result bb = layoutx("emit --device " + bound + " " + tiny_ + " --ctx 64 --out " + (tmp_ / "y"));
  EXPECT_EQ(bb.status, 2);
  EXPECT_TRUE(has(bb.out, bound + ":")) << bb.out;
  EXPECT_TRUE(has(bb.out, "boundaries: unknown timing boundary 'aihub' (allowed: netrun, accelerator")) << bb.out;
  // A CPU device has no HTP to emit a bundle for, and no shipped calibration.
  Result c = layoutx("emit --device onnxruntime-cpu " + tiny_ + " --ctx 64 --out " + (tmp_ / "z"));
  EXPECT_EQ(c.status, 2);
  EXPECT_TRUE(has(c.out, "onnxruntime-cpu is not an HTP device a job bundle can target")) << c.out;
  Result cp = layoutx("predict --device onnxruntime-cpu");
  EXPECT_EQ(cp.status, 2);
  EXPECT_TRUE(has(cp.out, "--device: no calibrated cost model for 'onnxruntime-cpu'")) << cp.out;
  // measure runs on this machine's CPU: a device timed as the HTP is refused before any work.
  Result m = layoutx("measure --device galaxy-s25 " + tiny_ + " --ctx 64 --no-ingest --out " + (tmp_ / "m"));
  EXPECT_EQ(m.status, 2);
  EXPECT_TRUE(has(m.out, "galaxy-s25 times layers as [ours, aihub_estimate, accelerator], not as ort_node")) << m.out;
}

}  // namespace
