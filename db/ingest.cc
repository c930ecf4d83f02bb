#include "db/ingest.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "db/batch_insert.h"
#include "db/ingest_checks.h"
#include "db/schema.h"
#include "db/sha256.h"
#include "model/variant.h"
#include "support/clock.h"
#include "support/error.h"

namespace layoutx::db {

namespace {

bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// The canonical key of the command line's variant (with --precision applied).
std::string context_variant_key(const IngestContext& ctx, const std::string& name) {
  if (ctx.variant.empty()) throw Error(name + ": this format profiles one graph: give --variant KEY|PRESET");
  model::Variant v = model::parse_variant(ctx.variant);
  if (!ctx.precision.empty()) v.set(model::parse_precision(ctx.precision));
  v.validate();
  return v.key();
}

std::string precision_of_key(const std::string& key) { return model::to_string(model::parse_variant(key).precision()); }

// One stored layer row as a line: what a re-ingest under other flags would change.
std::string record_text(const std::string& device, const std::string& model, const std::string& key,
                        const std::string& layer, int64_t ctx) {
  return "device " + device + ", model " + model + ", layer " + layer + ", ctx " + std::to_string(ctx) + ", variant " + key;
}

// The layer rows of run `run` as record_text lines, sorted.
std::vector<std::string> stored_records(Connection& c, int64_t run) {
  auto q = c.prepare("SELECT d.name, m.name, v.key, l.layer_type, l.ctx FROM layer_measurements l "
                     "JOIN devices d ON d.id = l.device_id JOIN models m ON m.id = l.model_id "
                     "JOIN variants v ON v.id = l.variant_id WHERE l.run_id = ?1");
  q.bind(1, run);
  std::vector<std::string> out;
  while (q.step()) out.push_back(record_text(q.text(0), q.text(1), q.text(2), q.text(3), q.int64(4)));
  std::sort(out.begin(), out.end());
  return out;
}

// Deletes run `run` and every row it added (children first: PostgreSQL and SQLite alike).
void delete_run(Connection& c, int64_t run) {
  for (const char* table : {"op_measurements", "op_shares", "compile_outcomes", "layer_measurements"})
    c.prepare(std::string("DELETE FROM ") + table + " WHERE run_id = ?1").bind(1, run).run();
  c.prepare("DELETE FROM measurement_runs WHERE id = ?1").bind(1, run).run();
}

}  // namespace

Format detect_format(const std::string& path, std::string_view text) {
  std::string lower;
  for (char ch : path) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (ends_with(lower, ".yaml") || ends_with(lower, ".yml")) return Format::kYaml;
  if (ends_with(lower, ".csv")) {
    if (text.find("Msg Timestamp") != std::string_view::npos) return Format::kQnnCsv;
    return Format::kCsv;
  }
  if (ends_with(lower, ".json")) {
    size_t i = text.find_first_not_of(" \t\r\n");
    if (i != std::string_view::npos && text[i] == '[') return Format::kOrtJson;
    if (text.find("\"execution_summary\"") != std::string_view::npos) return Format::kAihubJson;
    throw Error(path + ": a JSON file that is neither an AI Hub profile (no \"execution_summary\") nor an ONNX "
                "Runtime profile (not an array); give --format");
  }
  throw Error(path + ": cannot tell the format from the name; give --format yaml|csv|qnn-csv|aihub-json|ort-json");
}

int64_t device_id(Connection& c, const std::string& name, const std::string& description) {
  auto ins = c.prepare("INSERT INTO devices (name, description) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET "
                       "description = CASE WHEN devices.description = '' THEN excluded.description ELSE devices.description END");
  ins.bind(1, name).bind(2, description).run();
  auto q = c.prepare("SELECT id FROM devices WHERE name = ?1");
  q.bind(1, name).step();
  return q.int64(0);
}

int64_t model_id(Connection& c, const std::string& name) {
  c.prepare("INSERT INTO models (name) VALUES (?1) ON CONFLICT DO NOTHING").bind(1, name).run();
  auto q = c.prepare("SELECT id FROM models WHERE name = ?1");
  q.bind(1, name).step();
  return q.int64(0);
}

int64_t variant_id(Connection& c, const std::string& key) {
  model::Variant v = model::parse_variant(key);
  c.prepare("INSERT INTO variants (key, preset, precision) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING")
      .bind(1, v.key()).bind(2, v.preset()).bind(3, model::to_string(v.precision())).run();
  auto q = c.prepare("SELECT id FROM variants WHERE key = ?1");
  q.bind(1, v.key()).step();
  return q.int64(0);
}

IngestResult store_profile(Connection& c, const Profile& p, const std::string& name, const std::string& hash,
                           const IngestContext& ctx) {
  IngestResult res;
  res.path = name;
  res.hash = hash;
  res.format = p.format;
  res.boundary = p.boundary;
  // The device: --device, or the file's own device id; both given must agree.
  if (!ctx.device.empty() && !p.device.empty() && ctx.device != p.device)
    throw Error(name + ": the file is for device \"" + p.device + "\" but --device says \"" + ctx.device + "\"");
  const std::string device = ctx.device.empty() ? p.device : ctx.device;
  if (device.empty()) throw Error(name + ": give --device (our device id, e.g. galaxy-s25)");
  res.device = device;
  // Validate the context the one-graph formats need before writing anything.
  const bool one_graph = p.format == Format::kQnnCsv || p.format == Format::kAihubJson || p.format == Format::kOrtJson;
  std::string ctx_key;
  if (one_graph) {
    ctx_key = context_variant_key(ctx, name);
    if (ctx.layer != "sliding" && ctx.layer != "full")
      throw Error(name + ": this format profiles one graph: give --layer sliding|full");
    if (!ctx.ctx || *ctx.ctx < 1) throw Error(name + ": this format profiles one graph: give --ctx N");
  }
  // Refuse impossible timings, unknown models and short sliding caches, naming file and row.
  std::vector<LayerRowToStore> to_check;
  for (const auto& l : p.layers)
    to_check.push_back({l.model.empty() ? ctx.model : l.model, l.layer_type.empty() ? ctx.layer : l.layer_type,
                        l.cache_entries, l.ms, l.line, l.ctx ? l.ctx : ctx.ctx});
  check_layer_rows(to_check, name);
  // The records as this command line would store them (compared with a stored run of the same file).
  std::vector<std::string> wanted;
  for (const auto& l : p.layers) {
    const std::string key = l.variant_key.empty() ? ctx_key : l.variant_key;
    const std::optional<int> lctx = l.ctx ? l.ctx : ctx.ctx;
    if (!key.empty() && lctx)
      wanted.push_back(record_text(device, l.model.empty() ? ctx.model : l.model, model::parse_variant(key).key(),
                                   l.layer_type.empty() ? ctx.layer : l.layer_type, *lctx));
  }
  std::sort(wanted.begin(), wanted.end());
  // 1. One transaction; the write lock is taken up front.
  Transaction tx(c);
  // 2. Idempotence: the same content was ingested before. Stored as this command line says:
  //    skipped. Stored otherwise (another --layer/--ctx/--variant/--device): the stored record
  //    keeps what it was stored with, so the command cannot do what it asks: refused, unless
  //    --replace (the old run goes, the file is stored again, in this transaction).
  auto seen = c.prepare("SELECT id FROM measurement_runs WHERE content_hash = ?1");
  seen.bind(1, hash);
  if (seen.step()) {
    const int64_t old_run = seen.int64(0);
    seen.reset();
    const std::vector<std::string> stored = stored_records(c, old_run);
    if (stored == wanted && !ctx.replace) {
      res.skipped = true;
      res.run_id = old_run;
      return res;  // the transaction rolls back; nothing was written
    }
    if (!ctx.replace) {
      size_t i = 0;
      while (i < stored.size() && i < wanted.size() && stored[i] == wanted[i]) ++i;
      throw Error(name + ": already ingested as run " + std::to_string(old_run) + " (same SHA-256 " + hash.substr(0, 12) +
                  ") with other flags; the stored record keeps " + (i < stored.size() ? stored[i] : "no such row") +
                  ", not " + (i < wanted.size() ? wanted[i] : "no such row") +
                  " as this command line says; give --replace to delete run " + std::to_string(old_run) +
                  " and store the file again with these flags (nothing was written)");
    }
    delete_run(c, old_run);
    res.replaced_run = old_run;
  }
  // 3. The run.
  int64_t dev = device_id(c, device, p.device_description);
  std::string notes = p.notes;
  if (!ctx.notes.empty()) notes += (notes.empty() ? "" : "; ") + ctx.notes;
  //    The unique content hash decides between concurrent writers of the same file (not the
  //    read above): the loser's insert does nothing, and its transaction rolls back.
  auto run = c.prepare("INSERT INTO measurement_runs (source_path, content_hash, format, tool, tool_version, device_id, "
                       "ingested_at, notes, boundary) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
                       "ON CONFLICT (content_hash) DO NOTHING RETURNING id");
  run.bind(1, name).bind(2, hash).bind(3, to_string(p.format)).bind(4, p.tool).bind(5, p.tool_version)
      .bind(6, dev).bind(7, utc_now()).bind(8, notes).bind(9, p.boundary);
  if (!run.step()) {
    auto other = c.prepare("SELECT id FROM measurement_runs WHERE content_hash = ?1");
    other.bind(1, hash);
    res.skipped = true;
    res.run_id = other.step() ? other.int64(0) : 0;
    return res;  // rolls back the device / model rows this transaction added
  }
  res.run_id = run.int64(0);
  run.reset();
  // 4. Layer-level measurements (a one-graph profile's total takes the command line's variant).
  //    Model and variant ids are looked up once per name; rows go in multi-row INSERTs.
  std::map<std::string, int64_t> models, variants;
  auto mid = [&](const std::string& n) {
    auto it = models.find(n);
    return it != models.end() ? it->second : models.emplace(n, model_id(c, n)).first->second;
  };
  auto vid = [&](const std::string& k) {
    auto it = variants.find(k);
    return it != variants.end() ? it->second : variants.emplace(k, variant_id(c, k)).first->second;
  };
  BatchInsert ins_layer(c, "INSERT INTO layer_measurements (run_id, device_id, model_id, variant_id, layer_type, ctx, "
                           "cache_entries, precision, ms, samples)", 10);
  std::optional<int64_t> graph_layer_id;
  for (const auto& l : p.layers) {
    std::string key = l.variant_key.empty() ? ctx_key : l.variant_key;
    if (key.empty()) throw Error(name + ":" + std::to_string(l.line) + ": no variant for this measurement (give --variant)");
    std::string layer = l.layer_type.empty() ? ctx.layer : l.layer_type;
    std::optional<int> lctx = l.ctx ? l.ctx : ctx.ctx;
    if (!lctx) throw Error(name + ":" + std::to_string(l.line) + ": no context for this measurement (give --ctx)");
    std::string model = l.model.empty() ? ctx.model : l.model;
    ins_layer.add({res.run_id, dev, mid(model), vid(key), layer, int64_t{*lctx}, BatchInsert::opt(l.cache_entries),
                   precision_of_key(key), l.ms, int64_t{l.samples}});
    if (one_graph) {  // the ops below refer to this row: store it now and take its id
      ins_layer.finish();
      graph_layer_id = c.last_insert_id();
    }
    ++res.layers;
  }
  ins_layer.finish();
  // 5. Op-level measurements, tied to the graph's layer measurement.
  BatchInsert ins_op(c, "INSERT INTO op_measurements (run_id, layer_measurement_id, inference, op_name, op_type, ms, "
                        "cycles, compute_unit)", 8);
  for (const auto& o : p.ops) {
    ins_op.add({res.run_id, BatchInsert::opt(graph_layer_id), int64_t{o.inference}, o.name, o.type, BatchInsert::opt(o.ms),
                BatchInsert::opt(o.cycles), o.compute_unit});
    ++res.ops;
  }
  ins_op.finish();
  // 6. Op shares and compile outcomes (our calibration YAML).
  auto ins_share = c.prepare(
      "INSERT INTO op_shares (run_id, model_id, layer_type, ctx, selector, op, share_min, share_max) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  for (const auto& s : p.shares) {
    ins_share.bind(1, res.run_id).bind(2, mid(s.model.empty() ? ctx.model : s.model)).bind(3, s.layer_type)
        .bind(4, s.ctx).bind(5, s.selector).bind(6, s.op).bind(7, s.share_min).bind(8, s.share_max);
    ins_share.run();
    ++res.shares;
  }
  auto ins_comp = c.prepare(
      "INSERT INTO compile_outcomes (run_id, device_id, variant_id, precision, form, result, exit_code, message) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  for (const auto& k : p.compiles) {
    std::optional<int64_t> variant;
    if (!k.variant_key.empty()) variant = vid(k.variant_key);
    ins_comp.bind(1, res.run_id).bind(2, dev).bind(3, variant).bind(4, k.precision).bind(5, k.form)
        .bind(6, k.result).bind(7, k.exit_code).bind(8, k.message);
    ins_comp.run();
    ++res.compiles;
  }
  // 7. Commit.
  tx.commit();
  return res;
}

IngestResult ingest_text(Connection& c, std::string_view text, const std::string& name, const IngestContext& ctx) {
  // 1. Format, hash, parse: nothing is written until the whole file has parsed.
  Format f = ctx.format ? *ctx.format : detect_format(name, text);
  std::string hash = sha256_hex(text);
  Profile p = parse_profile(f, text, name);
  // 2. Store in one transaction; one the server aborted for a concurrent writer (a deadlock
  //    between two files adding the same new variants in different orders) is run again.
  for (int attempt = 1;; ++attempt) {
    try {
      IngestResult r = store_profile(c, p, name, hash, ctx);
      r.warnings = p.warnings;
      return r;
    } catch (const TransientDbError&) {
      if (attempt == 5) throw;
    }
  }
}

IngestResult ingest_file(Connection& c, const std::string& path, const IngestContext& ctx) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ingest_text(c, ss.str(), path, ctx);
}

}  // namespace layoutx::db
