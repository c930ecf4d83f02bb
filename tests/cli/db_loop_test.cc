// The database gates and loop, run as users run them: regress and report open an existing
// database read-only (a missing one, an unknown device or model is exit 2 with the known ones
// listed, and the database is unchanged), ingest refuses impossible rows, and a calibration
// saved by `calibrate --db` is what predict, select, step, whatif and regress then use.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli/run_layoutx.h"
#include "tests/temp_dir.h"

namespace {

using layoutx::test::has;
using layoutx::test::layoutx;
using layoutx::test::Result;

std::string bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A unique temp folder per test, removed at the end.
class DbLoop : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = std::make_unique<layoutx::test::TempDir>("db-loop");
    dir_ = tmp_->path();
    db_ = (dir_ / "x.db").string();
  }
  std::unique_ptr<layoutx::test::TempDir> tmp_;

  // The shipped measurements (and optionally more files) in the database.
  void ingest_shipped(const std::string& more = "") {
    Result r = layoutx("ingest " + std::string(LAYOUTX_CONFIG_DIR) + "/calibration/spark-s25-measurements.yaml " +
                       more + " --device galaxy-s25 --db " + db_);
    ASSERT_EQ(r.status, 0) << r.out;
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream((dir_ / name).string()) << text;
    return (dir_ / name).string();
  }
  // Exit 2, the message, and the database byte for byte as it was.
  void expect_refused(const std::string& args, const std::string& message) {
    const std::string before = bytes(db_);
    Result r = layoutx(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
    EXPECT_TRUE(has(r.out, message)) << args << "\n" << r.out;
    EXPECT_EQ(bytes(db_), before) << args << ": the database changed";
  }

  std::filesystem::path dir_;
  std::string db_;
};

TEST_F(DbLoop, GatesRefuseAMissingDatabaseAndDoNotCreateIt) {
  for (const char* verb : {"regress", "report"}) {
    const std::string missing = (dir_ / "sub" / "typo.db").string();
    Result r = layoutx(std::string(verb) + " --db " + missing);
    EXPECT_EQ(r.status, 2) << verb << "\n" << r.out;
    EXPECT_TRUE(has(r.out, "typo.db: no such database (only `layoutx ingest` creates one")) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "sub")) << verb << " created the folder";
  }
  Result c = layoutx("calibrate --no-save --db " + (dir_ / "typo.db").string());
  EXPECT_EQ(c.status, 2) << c.out;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "typo.db"));
}

TEST_F(DbLoop, GatesRefuseAnUnknownDeviceOrModelListingTheKnownOnes) {
  ingest_shipped();
  expect_refused("regress --db " + db_ + " --device nope", "--device: no measurements of 'nope' in " + db_ + " (known: galaxy-s25)");
  expect_refused("regress --db " + db_ + " --model nope", "--model: no measurements of 'nope' in " + db_ + " (known: spark-x2.5-1.7b)");
  expect_refused("report --db " + db_ + " --device nope", "(known: galaxy-s25)");
  expect_refused("report --db " + db_ + " --model nope", "(known: spark-x2.5-1.7b)");
  // A tolerance that is not a number would make every slowdown compare false: refused, not clean.
  for (const char* t : {"nan", "inf", "-0.1", "3%", "0x1", "1e", "+", "+-1", "++1"})
    expect_refused("regress --db " + db_ + " --tolerance " + t, "--tolerance: must be a finite number in [0, 10], got '" + std::string(t) + "'");
  // Decimal forms are taken as typed.
  for (const char* t : {"0.05", "+0.05", "5e-2", "1"}) {
    Result r = layoutx("regress --db " + db_ + " --tolerance " + t);
    EXPECT_EQ(r.status, 0) << t << ": " << r.out;
  }
}

TEST_F(DbLoop, RegressStoresNothingUnlessAsked) {
  ingest_shipped();
  const std::string before = bytes(db_);
  Result r = layoutx("regress --db " + db_);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "14 keys, 0 regressed")) << r.out;
  EXPECT_EQ(bytes(db_), before);
  Result rep = layoutx("report --db " + db_);
  EXPECT_TRUE(has(rep.out, "none yet (layoutx regress --record-predictions")) << rep.out;
  Result rec = layoutx("regress --record-predictions --db " + db_);
  EXPECT_EQ(rec.status, 0) << rec.out;
  rep = layoutx("report --db " + db_);
  EXPECT_TRUE(has(rep.out, "calibration error over time")) << rep.out;
  EXPECT_FALSE(has(rep.out, "none yet")) << rep.out;
}

TEST_F(DbLoop, ReportAndRegressWorkOnAReadOnlyFileAndFolder) {
  ingest_shipped();
  std::filesystem::permissions(db_, std::filesystem::perms::owner_read | std::filesystem::perms::group_read);
  std::filesystem::permissions(dir_, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  const std::string before = bytes(db_);
  Result rep = layoutx("report --db " + db_);
  Result reg = layoutx("regress --db " + db_);
  std::filesystem::permissions(dir_, std::filesystem::perms::owner_all);
  EXPECT_EQ(rep.status, 0) << rep.out;
  EXPECT_EQ(reg.status, 0) << reg.out;
  EXPECT_EQ(bytes(db_), before);
}

TEST_F(DbLoop, IngestRefusesImpossibleRowsNamingFileAndRow) {
  ingest_shipped();
  const std::string head = "layer,ctx,variant,precision,ms\n";
  expect_refused("ingest --device galaxy-s25 --db " + db_ + " " + write("zero.csv", head + "full,4096,ring,fp16,0\n"),
                 "zero.csv:2: ms: must be in (0, 10000] (one layer's decode step), got 0");
  expect_refused("ingest --device galaxy-s25 --db " + db_ + " " + write("huge.csv", head + "full,4096,ring,fp16,1e308\n"),
                 "huge.csv:2: ms: must be in (0, 10000] (one layer's decode step), got 1e+308");
  expect_refused("ingest --device galaxy-s25 --db " + db_ + " " +
                     write("short.csv", "layer,ctx,variant,precision,ms,cache_entries\nsliding,4096,roll,fp16,1.7,100\n"),
                 "short.csv:2: cache_entries: 100 is below the sliding window - 1 (511) of spark-x2.5-1.7b");
  expect_refused("ingest --device galaxy-s25 --db " + db_ + " --model nope " + write("m.csv", head + "full,4096,ring,fp16,2\n"),
                 "m.csv:2: model: unknown model 'nope' (known: gemma-3-1b, spark-x2.5-1.7b, spark-x2.5-4b)");
}

// A file whose device: has no spec is stored (a database may hold any device, and an exported
// bundle's device file may live outside configs/), with a warning naming the known devices;
// regress cannot predict its keys, so it says ERROR on them, never "ok", and exits 2 naming the
// key and what to do; the other devices still gate. (Before: exit 0, "no predictor ... ok".)
TEST_F(DbLoop, ADeviceWithoutASpecIsStoredButNeverPassesRegress) {
  std::string y = bytes(std::string(LAYOUTX_CONFIG_DIR) + "/calibration/spark-s25-measurements.yaml");
  const std::string from = "\ndevice: galaxy-s25\n";
  const size_t at = y.find(from);
  ASSERT_NE(at, std::string::npos);
  y.replace(at, from.size(), "\ndevice: pixel-9-pro\n");
  const std::string pixel = write("pixel.yaml", y);
  Result i = layoutx("ingest " + pixel + " --db " + db_);
  EXPECT_EQ(i.status, 0) << i.out;
  EXPECT_TRUE(has(i.out, "warning: " + pixel + ": device: 'pixel-9-pro' has no device spec (known: galaxy-s25, onnxruntime-cpu)"))
      << i.out;
  Result r = layoutx("regress --db " + db_);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_FALSE(has(r.out, " ok\n")) << r.out;
  EXPECT_TRUE(has(r.out, "  prediction failed  ERROR\n")) << r.out;
  EXPECT_TRUE(has(r.out, "14 keys, 0 regressed (tolerance 3.0% against the previous measurement; above the prediction interval), 14 not predicted (ERROR)"))
      << r.out;
  EXPECT_TRUE(has(r.out, "regress: 14 keys not predicted, so not checked (first: pixel-9-pro spark-x2.5-1.7b roll/fp16 sliding "
                         "ctx 4096): no device spec for 'pixel-9-pro' (known: galaxy-s25, onnxruntime-cpu): add "
                         "configs/devices/pixel-9-pro.yaml")) << r.out;
  // The HTML report's table says the same.
  Result h = layoutx("report --db " + db_ + " --html " + (dir_ / "html").string());
  EXPECT_EQ(h.status, 0) << h.out;
  const std::string page = bytes(dir_ / "html" / "index.html");
  EXPECT_TRUE(has(page, " class=\"reg\">ERROR</td>")) << page.substr(0, 2000);
  EXPECT_FALSE(has(page, ">ok</td>")) << page.substr(0, 2000);
  // The device with a spec still gates on its own.
  ingest_shipped();
  Result g = layoutx("regress --db " + db_ + " --device galaxy-s25");
  EXPECT_EQ(g.status, 0) << g.out;
  EXPECT_TRUE(has(g.out, "14 keys, 0 regressed")) << g.out;
}

// A profile ingested again under another --ctx is refused (exit 2, the stored record and
// --replace named, the database unchanged); with --replace the old run is replaced and said so.
TEST_F(DbLoop, ReingestUnderOtherFlagsSaysWhatIsStoredAndReplacesOnlyWhenAsked) {
  const std::string qnn = std::string(LAYOUTX_TEST_DIR) + "/fixtures/profiles/qnn_roll_sliding_fp16.csv";
  const std::string base = "ingest " + qnn + " --device galaxy-s25 --variant roll --layer sliding --db " + db_;
  Result first = layoutx(base + " --ctx 4096");
  ASSERT_EQ(first.status, 0) << first.out;
  expect_refused(base + " --ctx 8192",
                 qnn + ": already ingested as run 1 (same SHA-256 ");
  expect_refused(base + " --ctx 8192", "the stored record keeps device galaxy-s25, model spark-x2.5-1.7b, layer sliding, ctx 4096");
  expect_refused(base + " --ctx 8192", "give --replace to delete run 1 and store the file again with these flags");
  Result same = layoutx(base + " --ctx 4096");
  EXPECT_EQ(same.status, 0) << same.out;
  EXPECT_TRUE(has(same.out, "skipped  " + qnn + ": already ingested as run 1")) << same.out;
  Result rep = layoutx(base + " --ctx 8192 --replace");
  EXPECT_EQ(rep.status, 0) << rep.out;
  EXPECT_TRUE(has(rep.out, "(replaces run 1)")) << rep.out;
  Result reg = layoutx("regress --db " + db_);
  EXPECT_TRUE(has(reg.out, "sliding  8192")) << reg.out;
  EXPECT_FALSE(has(reg.out, "sliding  4096")) << reg.out;
}

TEST_F(DbLoop, CalibrateWritesTheShippedFileOnlyWhenAsked) {
  const std::string shipped = std::string(LAYOUTX_CONFIG_DIR) + "/calibration/galaxy-s25.calibration.yaml";
  const std::string before = bytes(shipped);
  const auto mtime = std::filesystem::last_write_time(shipped);
  Result r = layoutx("calibrate");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "not saved (--out FILE, --update-shipped or --db DB saves it)")) << r.out;
  EXPECT_EQ(bytes(shipped), before);
  EXPECT_EQ(std::filesystem::last_write_time(shipped), mtime);
  const std::string out = (dir_ / "cal.yaml").string();
  r = layoutx("calibrate --out " + out);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(bytes(out), "coefficients:"));
}

// The loop: the shipped data plus one new profile; calibrate --db; predict (and the other
// verbs) with --db use that calibration, say so, and the figure moves.
TEST_F(DbLoop, CalibrationSavedInTheDatabaseIsUsedAndNamedEverywhere) {
  // A new measurement of a graph the shipped data lacks: full ring fp16 at ctx 8192, 20% above the
  // shipped calibration's 3.93 ms; plus a repeat of a shipped graph (sliding roll fp16, 1.689 ms).
  ingest_shipped(write("new.csv", "layer,ctx,variant,precision,ms\nfull,8192,ring,fp16,4.72\nsliding,4096,roll,fp16,1.70\n"));
  const std::string predict = "predict --layer full --layout ring --precision fp16 --ctx 8192 --json";
  Result shipped = layoutx(predict);
  ASSERT_EQ(shipped.status, 0) << shipped.out;
  EXPECT_TRUE(has(shipped.out, "\"calibration_source\": \"shipped hypotheses configs/calibration/galaxy-s25.hypotheses.yaml")) << shipped.out;
  Result cal = layoutx("calibrate --json --db " + db_);
  ASSERT_EQ(cal.status, 0) << cal.out;
  EXPECT_TRUE(has(cal.out, "\"stored_in_database\": \"" + db_ + "\"")) << cal.out;
  EXPECT_TRUE(has(cal.out, "(mean of 2)")) << "the two timings of one graph are one measurement\n" << cal.out;
  // What the --db verbs load: the kept hypotheses' mixture, stored under its own id.
  const std::string id = cal.out.substr(cal.out.find("\"stored_calibration_id\": \"") + 26, 8);
  EXPECT_NE(id, cal.out.substr(cal.out.find("\"calibration_id\": \"") + 19, 8)) << "the base fit is not what is stored";
  Result mine = layoutx(predict + " --db " + db_);
  ASSERT_EQ(mine.status, 0) << mine.out;
  EXPECT_TRUE(has(mine.out, "\"calibration_id\": \"" + id + "\"")) << mine.out;
  EXPECT_TRUE(has(mine.out, "\"calibration_source\": \"database " + db_ + " (latest for galaxy-s25")) << mine.out;
  auto latency = [](const std::string& json) { return std::stod(json.substr(json.find("\"latency_ms\": ") + 14)); };
  EXPECT_GT(latency(mine.out), latency(shipped.out) + 0.1) << "the new measurement moves the prediction toward it";
  EXPECT_LT(latency(mine.out), 4.72);
  // It is the hypotheses' mixture, as the shipped files give, not the base structure alone.
  Result each = layoutx("predict --layer full --layout ring --precision fp16 --ctx 8192 --hypotheses --db " + db_);
  EXPECT_TRUE(has(each.out, "hypotheses (those holding 99% of the weight")) << each.out;
  // Every cost-model verb names the calibration and its source, in text and JSON.
  for (const std::string& verb : {std::string("select --no-fidelity --ctx 4096"), std::string("step --ctx 4096"), std::string("step --sweep-ctx 1024:4096"),
                                  std::string("whatif --no-fidelity --precision w8a16"),
                                  std::string("predict --layer full")}) {
    Result text = layoutx(verb + " --db " + db_);
    EXPECT_EQ(text.status, 0) << verb << "\n" << text.out;
    EXPECT_TRUE(has(text.out, id) && has(text.out, "database " + db_)) << verb << "\n" << text.out;
    Result json = layoutx(verb + " --json --db " + db_);
    EXPECT_TRUE(has(json.out, "\"calibration_source\": \"database " + db_)) << verb << "\n" << json.out;
  }
  // regress takes the database's latest calibration by default, and --calibration FILE over it.
  Result reg = layoutx("regress --db " + db_);
  EXPECT_TRUE(has(reg.out, "galaxy-s25: calibration " + id + " (database " + db_)) << reg.out;
  const std::string file = (dir_ / "shipped-copy.yaml").string();
  std::filesystem::copy_file(std::string(LAYOUTX_CONFIG_DIR) + "/calibration/galaxy-s25.calibration.yaml", file);
  reg = layoutx("regress --json --db " + db_ + " --calibration " + file);
  EXPECT_TRUE(has(reg.out, "\"calibration_source\": \"file " + file + "\"")) << reg.out;
  // Asking for a database calibration that is not there is an error, not a silent fallback.
  Result none = layoutx(predict + " --db " + db_ + " --device onnxruntime-cpu");
  EXPECT_EQ(none.status, 2) << none.out;
  EXPECT_TRUE(has(none.out, "holds no calibration for 'onnxruntime-cpu'")) << none.out;
}

// The op-level profile's loop back: an AI Hub profile of a timed graph with per-op rows (named as
// QNN's converter names our ops) becomes one op share per cost class in `calibrate --db`, each
// measured share its class's rows over all rows; a converter-inserted row counts in the whole.
TEST_F(DbLoop, CalibrateFitsAStoredPerOpProfileAsClassShares) {
  ingest_shipped();
  Result ops = layoutx("predict --layer sliding --layout roll --precision fp16 --per-op --json");
  ASSERT_EQ(ops.status, 0) << ops.out;
  // Every op 10 us, copies (data_movement) 100 us, plus a 20 us converter-inserted row.
  std::string detail;
  double total = 20, copies = 0;
  for (size_t at = ops.out.find("\"name\": \""); at != std::string::npos; at = ops.out.find("\"name\": \"", at + 1)) {
    const size_t b = at + 9, e = ops.out.find('"', b);
    if (ops.out.substr(b, e - b) == "graph") continue;  // the graph-level terms: no op of a profile
    std::string name = "_" + ops.out.substr(b, e - b);
    std::replace(name.begin(), name.end(), '/', '_');
    const bool copy = ops.out.compare(ops.out.find("\"class\": \"", e) + 10, 14, "data_movement\"") == 0;
    const double us = copy ? 100 : 10;
    total += us;
    copies += copy ? us : 0;
    detail += "{\"name\": \"" + name + "\", \"type\": \"x\", \"compute_unit\": \"NPU\", \"execution_time\": " +
              std::to_string(us) + "}, ";
  }
  ASSERT_GT(copies, 0);
  detail += "{\"name\": \"converted_input_0\", \"type\": \"Convert\", \"compute_unit\": \"NPU\", \"execution_time\": 20}";
  const std::string json = write("profile.json", "{\"execution_summary\": {\"estimated_inference_time\": 1700}, \"execution_detail\": [" + detail + "]}");
  Result in = layoutx("ingest " + json + " --device galaxy-s25 --variant roll --layer sliding --ctx 4096 --precision fp16 --db " + db_);
  ASSERT_EQ(in.status, 0) << in.out;
  Result cal = layoutx("calibrate --json --no-save --db " + db_);
  ASSERT_EQ(cal.status, 0) << cal.out;
  const size_t at = cal.out.find(":data_movement\",\n      \"kind\": \"op_share\"");
  ASSERT_NE(at, std::string::npos) << cal.out;
  EXPECT_NEAR(std::stod(cal.out.substr(cal.out.find("\"measured\": ", at) + 12)), copies / total, 1e-6);
  EXPECT_TRUE(has(cal.out, "\"id\": \"db-op:")) << cal.out;
  EXPECT_TRUE(has(cal.out, "1 per-op profile row matched no op of the profiled graph; counted only in the profile's total (first: run 2: converted_input_0)"))
      << cal.out;
}

// next does not propose a graph the database already holds a timing of (besides the device's
// measurement file): the full roll at fp16, ctx 4096, is a candidate until it is ingested. (fp16:
// a quarter of w4a16's graphs, which have weight_quant too; the mechanism is the same.)
TEST_F(DbLoop, NextSkipsGraphsTimedInTheDatabase) {
  const std::string ask = "next --precision fp16 --ctx 4096 --no-fidelity --json";
  // Every candidate: the count at --budget 1, then that many.
  auto all = [&](const std::string& db) {
    Result one = layoutx(ask + " --budget 1" + db);
    EXPECT_EQ(one.status, 0) << one.out;
    if (one.status != 0) return one;
    const int n = std::stoi(one.out.substr(one.out.find("\"candidate_measurements\": ") + 26));
    return layoutx(ask + " --budget " + std::to_string(n) + db);
  };
  // Timings and op-level profiles: one per known-good graph. (The compile-only checks are of the
  // untested graphs predicted faster, which a recalibration may move by one.)
  auto graphs = [](const std::string& json) {
    int n = 0;
    for (const char* kind : {"\"kind\": \"timing\"", "\"kind\": \"op-profile\""})
      for (size_t at = json.find(kind); at != std::string::npos; at = json.find(kind, at + 1)) ++n;
    return n;
  };
  const std::string roll = "\"variant_key\": \"precision=fp16\"";
  Result before = all("");
  ASSERT_EQ(before.status, 0) << before.out;
  ASSERT_TRUE(has(before.out, roll)) << before.out;
  ingest_shipped(write("roll.csv", "layer,ctx,variant,precision,ms\nfull,4096,roll,fp16,2.9\n"));
  ASSERT_EQ(layoutx("calibrate --db " + db_).status, 0);
  // The timing of the graph the database timed becomes an op-level profile of it: as many
  // graphs, and every entry of that graph is a profile.
  Result after = all(" --db " + db_);
  ASSERT_EQ(after.status, 0) << after.out;
  EXPECT_GT(graphs(before.out), 0) << before.out;
  EXPECT_EQ(graphs(after.out), graphs(before.out)) << after.out;
  int entries = 0;
  for (size_t at = after.out.find(roll); at != std::string::npos; at = after.out.find(roll, at + 1)) {
    const size_t kind = after.out.rfind("\"kind\": \"", at);
    ASSERT_NE(kind, std::string::npos);
    const std::string profile = "\"kind\": \"op-profile\"";
    EXPECT_EQ(after.out.compare(kind, profile.size(), profile), 0) << after.out.substr(kind, 60);
    ++entries;
  }
  EXPECT_GE(entries, 1) << after.out;
}

}  // namespace
