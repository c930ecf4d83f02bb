// Our simple measurement CSV: a header line naming the columns, then one layer measurement per
// line. Columns: layer (sliding|full), ctx (tokens), variant (a preset name or a quoted
// canonical key), precision (overrides the variant's), and exactly one time column, ms or us;
// optional: model, cache_entries, samples. Lines starting with '#' are comments. Unknown
// columns are errors.
#include <map>

#include "db/csv.h"
#include "db/profile.h"
#include "model/variant.h"
#include "support/error.h"

namespace layoutx::db {

Profile parse_measurement_csv(std::string_view text, const std::string& name) {
  Profile prof;
  prof.format = Format::kCsv;
  prof.tool = "layoutx-csv";
  prof.boundary = "ours";
  LineReader lines(text);
  std::string_view line;
  auto at = [&](int ln) { return name + ":" + std::to_string(ln) + ": "; };
  // 1. The header.
  std::map<std::string, size_t> col;
  while (lines.next(line)) {
    auto t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    auto fields = split_csv_line(line, name, lines.line_no());
    for (size_t i = 0; i < fields.size(); ++i) {
      static const char* known[] = {"layer", "ctx", "variant", "precision", "ms", "us", "model", "cache_entries", "samples"};
      bool ok = false;
      for (const char* k : known) ok = ok || fields[i] == k;
      if (!ok) throw Error(at(lines.line_no()) + "unknown column \"" + fields[i] +
                           "\" (known: layer, ctx, variant, precision, ms or us, model, cache_entries, samples)");
      // A repeated column would leave a field unmapped and the row check short (found by fuzzing).
      if (!col.emplace(fields[i], i).second)
        throw Error(at(lines.line_no()) + "column \"" + fields[i] + "\" appears twice");
    }
    for (const char* k : {"layer", "ctx", "variant", "precision"})
      if (!col.count(k)) throw Error(at(lines.line_no()) + "header lacks column \"" + k + "\"");
    if (col.count("ms") + col.count("us") != 1) throw Error(at(lines.line_no()) + "header needs exactly one of ms or us");
    break;
  }
  if (col.empty()) throw Error(name + ": no header line");
  const bool us = col.count("us") > 0;
  const size_t time_col = us ? col["us"] : col["ms"];
  // 2. Rows.
  while (lines.next(line)) {
    auto t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    const int ln = lines.line_no();
    auto f = split_csv_line(line, name, ln);
    if (f.size() != col.size())
      throw Error(at(ln) + "row has " + std::to_string(f.size()) + " fields, the header " + std::to_string(col.size()));
    LayerRecord r;
    r.line = ln;
    r.layer_type = f[col["layer"]];
    if (r.layer_type != "sliding" && r.layer_type != "full")
      throw Error(at(ln) + "layer must be sliding or full, got \"" + r.layer_type + "\"");
    long long ctx = 0;
    if (!parse_int64(f[col["ctx"]], ctx) || ctx < 1 || ctx > (1 << 24))
      throw Error(at(ln) + "ctx must be an integer in [1, 16777216], got \"" + f[col["ctx"]] + "\"");
    r.ctx = static_cast<int>(ctx);
    try {
      model::Variant v = model::parse_variant(f[col["variant"]]);
      v.set(model::parse_precision(f[col["precision"]]));
      r.variant_key = v.key();
    } catch (const Error& e) {
      throw Error(at(ln) + e.what());
    }
    double time = 0;
    if (!parse_double(f[time_col], time)) throw Error(at(ln) + "time \"" + f[time_col] + "\" is not a number");
    if (time < 0) throw Error(at(ln) + "negative time " + f[time_col]);
    r.ms = us ? time / 1000.0 : time;
    if (col.count("model")) r.model = f[col["model"]];
    if (col.count("cache_entries")) {
      long long ce = 0;
      if (!parse_int64(f[col["cache_entries"]], ce) || ce < 0 || ce > (1 << 24)) throw Error(at(ln) + "cache_entries must be a non-negative integer");
      r.cache_entries = static_cast<int>(ce);
    }
    if (col.count("samples")) {
      long long s = 0;
      if (!parse_int64(f[col["samples"]], s) || s < 1 || s > (1 << 30)) throw Error(at(ln) + "samples must be a positive integer");
      r.samples = static_cast<int>(s);
    }
    prof.layers.push_back(r);
  }
  if (prof.layers.empty()) throw Error(name + ": no measurement rows");
  return prof;
}

}  // namespace layoutx::db
