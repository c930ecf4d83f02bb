// layoutx ingest: reads measurement files (our YAML/CSV, qnn-profile-viewer CSV, AI Hub profile
// JSON, ONNX Runtime profile JSON) into the measurement database, one transaction per file.
// A file already ingested (same SHA-256) is skipped and said so; a malformed file is rejected
// with file:line and leaves the database untouched; the other files still go in, and the verb
// then fails (exit 2) naming every rejected file.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/flag_checks.h"
#include "cli/table.h"
#include "cli/output_flags.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "costmodel/device_spec.h"
#include "db/ingest.h"
#include "db/dialect.h"
#include "db/schema.h"
#include "model/limits.h"
#include "support/error.h"
#include "support/json_writer.h"

namespace layoutx::cli {

namespace {

struct IngestArgs {
  std::vector<std::string> files;
  std::string db;
  std::string format = "auto";
  int ctx = 0;
  db::IngestContext context;
  bool json = false;
};

// A device name with no spec is stored (the database may hold any device; an exported bundle's
// device file may live elsewhere), but nothing can predict its timings: said at once, since
// `regress` reports those keys as errors.
void no_spec_warning(db::IngestResult& r) {
  if (r.skipped || r.device.empty()) return;
  const auto known = costmodel::known_devices();
  if (std::find(known.begin(), known.end(), r.device) != known.end()) return;
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  r.warnings.push_back(r.path + ": device: '" + r.device + "' has no device spec (known: " + list +
                       "); stored, but its timings cannot be predicted: `regress` reports them as errors until configs/devices/" +
                       r.device + ".yaml exists");
}

// What the command line says about the files. A device spec file stands for its name (any id is
// allowed: a database may hold devices layoutx has no spec of).
db::IngestContext context_of(const IngestArgs& args) {
  db::IngestContext ctx = args.context;
  const std::string yaml = ".yaml";
  if (ctx.device.size() > yaml.size() && ctx.device.compare(ctx.device.size() - yaml.size(), yaml.size(), yaml) == 0)
    ctx.device = costmodel::load_device(ctx.device).name;
  if (args.ctx > 0) ctx.ctx = args.ctx;
  if (args.format != "auto") ctx.format = db::parse_format(args.format);
  return ctx;
}

// What went in (or was skipped) and what was rejected, and the database they went into.
struct Ingested {
  std::vector<db::IngestResult> done;
  ErrorList rejected;
  std::string target;                    // --db, or the default database
  std::unique_ptr<db::Connection> conn;  // null: a SQLite file this run created was removed (nothing went in)
};

// Opens (creates, migrates) the database and ingests each file in its own transaction; a bad file
// is recorded and the others go on. A SQLite file this run creates is removed again when no file
// goes in (a typo in a file name must not leave an empty database behind).
Ingested ingest_files(const IngestArgs& args, const db::IngestContext& ctx) {
  const std::string target = args.db.empty() ? db::default_db_path() : args.db;
  const bool created = !db::is_postgres_target(target) && !std::filesystem::exists(target);
  Ingested r;
  r.target = target;
  r.conn = db::open_database(args.db);
  for (const auto& f : args.files) {
    try {
      r.done.push_back(db::ingest_file(*r.conn, f, ctx));
      no_spec_warning(r.done.back());
    } catch (const Error& e) {
      r.rejected.add(e.what());
    }
  }
  if (created && r.done.empty()) {
    r.conn.reset();
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(target + suffix, ec);
  }
  return r;
}

void print_json(const Ingested& in) {
  JsonWriter w(std::cout);
  w.begin_object();
  w.field("database", in.conn ? in.conn->path() : in.target);
  w.key("files").begin_array();
  for (const auto& r : in.done) {
    w.begin_object();
    w.field("path", r.path);
    w.field("sha256", r.hash);
    w.field("format", db::to_string(r.format));
    w.field("boundary", r.boundary);
    w.field("skipped", r.skipped);
    w.key("replaced_run");
    r.replaced_run ? w.value(r.replaced_run) : w.null();
    w.field("run_id", r.run_id);
    w.field("layer_measurements", static_cast<int64_t>(r.layers));
    w.field("op_measurements", static_cast<int64_t>(r.ops));
    w.field("op_shares", static_cast<int64_t>(r.shares));
    w.field("compile_outcomes", static_cast<int64_t>(r.compiles));
    w.field("warnings", r.warnings);
    w.end_object();
  }
  w.end_array();
  w.field("rejected", in.rejected.messages());
  w.end_object();
}

// A line per file (its warnings on stderr), then the database.
void print_text(const Ingested& in) {
  for (const auto& r : in.done) {
    for (const auto& m : r.warnings) std::cerr << "layoutx: warning: " << m << "\n";
    if (r.skipped) {
      std::cout << "skipped  " << r.path << ": already ingested as run " << r.run_id << " (same SHA-256 "
                << r.hash.substr(0, 12) << ")\n";
      continue;
    }
    std::cout << "ingested " << r.path << ": run " << r.run_id << ", " << db::to_string(r.format) << ", boundary "
              << r.boundary << ", " << r.layers << " layer / " << r.ops << " op measurements";
    if (r.replaced_run) std::cout << " (replaces run " << r.replaced_run << ")";
    if (r.shares) std::cout << ", " << r.shares << " op shares";
    if (r.compiles) std::cout << ", " << r.compiles << " compile outcomes";
    std::cout << "\n";
  }
  std::cout << "database " << (in.conn ? in.conn->path() : in.target + " (not created: nothing went in)") << "\n";
}

}  // namespace

void add_ingest_verb(CLI::App& app) {
  auto args = std::make_shared<IngestArgs>();
  auto* sub = app.add_subcommand("ingest", "read measurement files (our YAML/CSV, qnn-profile-viewer CSV, AI Hub or "
                                           "ONNX Runtime profile JSON) into the measurement database");
  sub->add_option("files", args->files, "measurement files")->required();
  sub->add_option("--device", args->context.device,
                  "device id, e.g. galaxy-s25, or a device .yaml (its name); a file naming its device may omit it");
  sub->add_option("--variant", args->context.variant, "the profiled graph's variant: preset or canonical key");
  sub->add_option("--layer", args->context.layer, "the profiled graph's layer type: sliding|full");
  sub->add_option("--ctx", args->ctx, "the profiled graph's context (tokens)")
      ->check(integer_in(model::limits::kMinContext, model::limits::kMaxContext));  // the range of every verb
  sub->add_option("--precision", args->context.precision, "precision of the profiled graph (overrides the variant's)")->check(precision_name());
  sub->add_option("--model", args->context.model, "model name")->capture_default_str();
  sub->add_option("--format", args->format, "auto|yaml|csv|qnn-csv|aihub-json|ort-json")->capture_default_str();
  sub->add_flag("--replace", args->context.replace,
                "a file already ingested under other --device/--model/--variant/--layer/--ctx: delete its run and "
                "store it again with these (without it such a file is refused)");
  sub->add_option("--notes", args->context.notes, "free text kept with each run");
  sub->add_option("--db", args->db, "database file (default: $XDG_DATA_HOME/layoutx/layoutx.db)")->check(output_database());
  sub->callback([args, sub] {
    args->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    // 1. What the command line says about the files.
    const db::IngestContext ctx = context_of(*args);
    // 2. Open the database, each file in its own transaction (a bad file is recorded, the others go on).
    const Ingested in = ingest_files(*args, ctx);
    // 3. Print what went in and what was skipped.
    if (args->json) print_json(in);
    else print_text(in);
    // 4. Any rejected file makes the verb fail (exit 2) with every message.
    in.rejected.throw_if_any();
  });
}

}  // namespace layoutx::cli
