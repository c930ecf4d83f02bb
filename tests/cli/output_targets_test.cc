// Every writing verb under the one output-target rule (support/output_target.h), as a user runs
// them: a character device node (root only: mknod) and a FIFO as --out/--plot/--html/--db are
// refused with exit 2 before any work and survive with their type unchanged; a symbolic link is
// written through (the link stays, its target gets the output); an empty path is exit 2 naming
// the flag; a failed write to standard output fails the verb; folder outputs are published whole
// (a non-empty folder needs --force, a killed run leaves nothing at the target) and capped in size.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/cli_run.h"
#include "tests/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using layoutx::test::CliResult;
using layoutx::test::has;
using layoutx::test::TempDir;

const std::string kTiny = std::string("--model ") + LAYOUTX_TEST_DIR + "/fixtures/numerics/tiny-model.yaml";
const std::string kMeasurements = std::string(LAYOUTX_CONFIG_DIR) + "/calibration/spark-s25-measurements.yaml";

enum class Kind { kFile, kFolder, kDatabase };

struct Writer {
  std::string flag;
  std::string args;  // "{T}": the target, "{DB}": a database holding the shipped measurements
  Kind kind;
  bool runs_here = true;  // false: the verb needs ONNX Runtime (node), so only its refusals are checked
};

// Every verb that writes a path, with arguments that make it quick.
const std::vector<Writer>& writers() {
  static const std::vector<Writer> w = {
      {"--out", "select --no-fidelity --ctx 1024 --out {T}", Kind::kFile},
      {"--out", "calibrate --out {T}", Kind::kFile},
      {"--plot", "step --sweep-ctx 512:1024 --plot {T}", Kind::kFile},
      {"--plot", "regress --db {DB} --plot {T}", Kind::kFile},
      {"--out", "next " + kTiny + " --ctx 64 --no-fidelity --budget 1 --out {T}", Kind::kFolder},
      {"--out", "emit " + kTiny + " --ctx 64 --layout ring --calibration-samples 1 --out {T}", Kind::kFolder},
      {"--html", "report --db {DB} --html {T}", Kind::kFolder},
      {"--db", "measure " + kTiny + " --ctx 64 --runs 1 --warmup 0 --out {W} --db {T}", Kind::kDatabase, false},
      {"--db", "ingest " + kMeasurements + " --db {T}", Kind::kDatabase},
  };
  return w;
}

std::string sh_quoted(const std::string& s) { return "'" + s + "'"; }

std::string replaced(std::string s, const std::string& key, const std::string& value) {
  for (auto at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size())) s.replace(at, key.size(), value);
  return s;
}

class OutputTargets : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dbdir_ = new TempDir("output-targets-db");
    db_ = *dbdir_ / "m.db";
    CliResult r = layoutx::test::run_layoutx(dbdir_->path(), "ingest " + kMeasurements + " --db " + sh_quoted(db_));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dbdir_; }

  // `layoutx ARGS` with {T} the target; within 120 s (a verb that opened a FIFO would block).
  CliResult run(const Writer& w, const std::string& target) {
    std::string args = replaced(replaced(replaced(w.args, "{DB}", sh_quoted(db_)), "{W}", sh_quoted(tmp_ / "work")), "{T}", sh_quoted(target));
    return layoutx::test::run_layoutx(tmp_.path(), args, "timeout 120");
  }

  static mode_t type_of(const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
  }

  TempDir tmp_{"output-targets"};
  static TempDir* dbdir_;
  static std::string db_;
};
TempDir* OutputTargets::dbdir_ = nullptr;
std::string OutputTargets::db_;

TEST_F(OutputTargets, ACharacterDeviceIsRefusedAndSurvives) {
  if (::geteuid() != 0) GTEST_SKIP() << "mknod of a character device needs root (CI runs as root)";
  for (const auto& w : writers()) {
    const fs::path node = tmp_.path() / "node";
    fs::remove(node);
    ASSERT_EQ(::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);  // what /dev/null is
    CliResult r = run(w, node);
    EXPECT_EQ(r.status, 2) << w.args << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, w.flag + ": " + node.string() + ": is a character device")) << w.args << "\n" << r.err;
    EXPECT_EQ(type_of(node), S_IFCHR) << w.args;
  }
}

TEST_F(OutputTargets, AFifoIsRefusedAndSurvives) {
  for (const auto& w : writers()) {
    const fs::path fifo = tmp_.path() / "fifo";
    fs::remove(fifo);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
    CliResult r = run(w, fifo);
    EXPECT_EQ(r.status, 2) << w.args << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, w.flag + ": " + fifo.string() + ": is a FIFO")) << w.args << "\n" << r.err;
    EXPECT_EQ(type_of(fifo), S_IFIFO) << w.args;
  }
}

TEST_F(OutputTargets, ASymbolicLinkIsWrittenThrough) {
  for (const auto& w : writers()) {
    if (!w.runs_here) continue;
    const fs::path real = tmp_.path() / "real", link = tmp_.path() / "link";
    fs::remove_all(real);
    fs::remove(link);
    if (w.kind == Kind::kFile) std::ofstream(real) << "old";
    if (w.kind == Kind::kFolder) fs::create_directories(real);
    // A database link dangles: the verb creates the database at the link's target.
    fs::create_symlink(real, link);
    CliResult r = run(w, link);
    EXPECT_TRUE(r.status == 0 || (r.status == 1 && has(w.args, "regress"))) << w.args << "\n" << r.out << r.err;
    EXPECT_EQ(type_of(link), S_IFLNK) << w.args;
    EXPECT_EQ(fs::read_symlink(link), real) << w.args;
    if (w.kind == Kind::kFolder) {
      EXPECT_EQ(type_of(real), S_IFDIR) << w.args;
      EXPECT_FALSE(fs::is_empty(real)) << w.args;
    } else {
      EXPECT_EQ(type_of(real), S_IFREG) << w.args;
      EXPECT_GT(fs::file_size(real), 3u) << w.args << ": the link's target was not written";
    }
  }
}

TEST_F(OutputTargets, AnEmptyPathIsAnErrorNamingTheFlag) {
  for (const auto& w : writers()) {
    CliResult r = run(w, "");
    EXPECT_EQ(r.status, 2) << w.args << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, w.flag + ": the path is empty")) << w.args << "\n" << r.err;
  }
  EXPECT_TRUE(fs::is_empty(tmp_.path()));
}

// `layoutx ARGS > /dev/full`: exit status and stderr.
CliResult to_full_disk(const fs::path& cwd, const std::string& args) {
  TempDir capture("cli-capture");
  const std::string err = capture / "stderr";
  CliResult r;
  const int st = std::system(("cd " + sh_quoted(cwd) + " && " + LAYOUTX_BIN + " " + args + " >/dev/full 2>" + sh_quoted(err)).c_str());
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(err);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  return r;
}

TEST_F(OutputTargets, AFailedWriteToStandardOutputFailsTheVerb) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  for (const std::string& args : std::vector<std::string>{"select --no-fidelity --json", "select --no-fidelity", "calibrate --json", "graph",
                                  "report --db " + sh_quoted(db_), "regress --db " + sh_quoted(db_) + " --json", "--version"}) {
    CliResult r = to_full_disk(tmp_.path(), args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    // The cause is named when the last flush is what failed (an earlier failed write leaves only the fact).
    EXPECT_TRUE(has(r.err, "layoutx: error: standard output: write failed")) << args << "\n" << r.err;
  }
}

TEST_F(OutputTargets, IngestDoesNotCreateAMissingFolder) {
  CliResult r = layoutx::test::run_layoutx(tmp_.path(), "ingest " + kMeasurements + " --db " + sh_quoted(tmp_ / "missing/x.db"));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, "--db: " + (tmp_ / "missing/x.db") + ": folder " + (tmp_ / "missing") + " does not exist")) << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "missing"));
}

TEST_F(OutputTargets, ANonEmptyFolderIsRefusedUnlessForced) {
  const Writer& emit = writers()[5];
  for (const Writer* w : {&writers()[4], &emit, &writers()[6]}) {
    const fs::path out = tmp_.path() / "out";
    fs::remove_all(out);
    fs::create_directories(out);
    std::ofstream(out / "keep.txt") << "someone else's";
    CliResult r = run(*w, out);
    EXPECT_EQ(r.status, 2) << w->args << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, w->flag + ": " + out.string() + ": folder exists and is not empty (give --force")) << r.err;
    EXPECT_TRUE(fs::exists(out / "keep.txt")) << w->args;
    Writer forced = *w;
    forced.args += " --force";
    r = run(forced, out);
    EXPECT_TRUE(r.status == 0) << forced.args << "\n" << r.out << r.err;
    EXPECT_FALSE(fs::exists(out / "keep.txt")) << "--force replaces the folder's contents: " << w->args;
    EXPECT_FALSE(fs::is_empty(out)) << w->args;
  }
  // Only out/ is left beside the targets: no staging folder.
  for (const auto& e : fs::directory_iterator(tmp_.path()))
    EXPECT_EQ(e.path().filename().string()[0] == '.', false) << e.path();
}

TEST_F(OutputTargets, AKilledEmitLeavesNothingAtItsTarget) {
  // A Spark bundle (a ~200 MB ONNX) takes seconds: killed once its staging folder exists.
  const fs::path out = tmp_.path() / "bundle";
  const std::string cmd = std::string(LAYOUTX_BIN) + " emit --ctx 1024 --calibration-samples 2 --out " + sh_quoted(out);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::execl("/bin/sh", "sh", "-c", ("exec " + cmd + " >/dev/null 2>&1").c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  bool staged = false;
  for (int i = 0; i < 20000 && !staged; ++i) {
    for (const auto& e : fs::directory_iterator(tmp_.path())) staged = staged || e.path().filename().string().starts_with(".bundle.");
    if (!staged) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // into its writing
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(staged) << "emit never staged its folder";
  ASSERT_TRUE(WIFSIGNALED(status)) << "emit finished before it was killed";
  EXPECT_FALSE(fs::exists(out)) << "a killed emit left a folder at its target";
  // The next emit into the same target succeeds and removes the orphaned stage.
  CliResult r = run(writers()[5], out);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmp_.path())) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"bundle"});
}

TEST_F(OutputTargets, ABundleAboveTheSizeCapIsRefusedBeforeAnyWrite) {
  // Spark's full layer at 65536 tokens: 8 samples of two 268 MB caches used to be 8.2 GB (each
  // tensor twice, .npy and .bin); once, they are still 4.3 GB, above the 2 GiB cap.
  CliResult r = layoutx::test::run_layoutx(tmp_.path(), "emit --layer full --ctx 65536 --out " + sh_quoted(tmp_ / "big"));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, "the bundle would take 4.")) << r.err;
  EXPECT_TRUE(has(r.err, "above the cap of 2.15 GB")) << r.err;
  EXPECT_TRUE(has(r.err, "give --calibration-samples 3 or fewer")) << r.err;
  EXPECT_TRUE(fs::is_empty(tmp_.path()));
}

}  // namespace

namespace {

// measure --db: an existing file that is not a database is refused before the graph is emitted
// and run (not after minutes of ONNX Runtime runs); the file is left as it was. (Before: the
// database was opened only after the run; without ONNX Runtime the verb failed on that instead,
// never naming the database.)
TEST_F(OutputTargets, MeasureOpensAnExistingDatabaseBeforeTheRun) {
  const fs::path db = tmp_.path() / "notes.db";
  std::ofstream(db) << "not a database, just notes\n";
  const Writer& measure = writers()[7];
  ASSERT_EQ(measure.flag, "--db");
  CliResult r = run(measure, db);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, db.string())) << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "work")) << "measure worked before refusing its --db";
  std::ifstream in(db);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "not a database, just notes\n");
}

// measure of a model the database cannot store (not shipped: ingest refuses it) is refused
// before the run, naming --model and --no-ingest; nothing is created. (Before: the graph was
// emitted and run, then the ingest said "unknown model 'numerics-tiny'".)
TEST_F(OutputTargets, MeasureRefusesAModelTheDatabaseCannotStoreBeforeTheRun) {
  const fs::path db = tmp_.path() / "new.db";
  CliResult r = run(writers()[7], db);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "--model: the database stores timings of shipped models only and 'numerics-tiny' is not one (known: "))
      << r.err;
  EXPECT_TRUE(has(r.err, "give --no-ingest")) << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "work"));
  EXPECT_FALSE(fs::exists(db));
}

}  // namespace
