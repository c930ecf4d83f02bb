// qnn-profile-viewer --output=x.csv (shared/docs/profile-formats.md): version lines, then the
// header line starting "Msg Timestamp", then one row per event. We read the EXECUTE rows; the
// EXECUTE group repeats once per inference (--num_inferences). Per-op rows are in cycles and
// are converted to time with the same inference's "Accelerator (execute) time" in US over the
// same figure in CYCLES.
#include <array>
#include <map>
#include <set>

#include "db/csv.h"
#include "db/profile.h"
#include "support/error.h"

namespace layoutx::db {

namespace {

constexpr std::array<const char*, 7> kColumns = {"Msg Timestamp", "Message", "Time", "Unit of Measurement",
                                                 "Timing Source", "Event Level", "Event Identifier"};
enum Col { kTimestamp, kMessage, kTime, kUnit, kSource, kLevel, kIdentifier };

// Graph-level figures of one inference, in the unit named.
struct Inference {
  std::optional<double> accel_us, accel_cycles, accel_excl_wait_us, netrun_us;
  std::set<std::string> seen;  // identifiers of this inference (a repeat starts the next one)
  size_t first_op = 0, end_op = 0;  // its op rows in Profile::ops
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "<node>:OpId_<n> (cycles)" -> "<node>"; "Input OpId_3 (cycles)" -> "Input OpId_3".
std::string op_name(const std::string& id) {
  std::string_view s = id;
  if (auto p = s.rfind(" (cycles)"); p != std::string_view::npos && p + 9 == s.size()) s = s.substr(0, p);
  if (auto p = s.rfind(":OpId_"); p != std::string_view::npos) s = s.substr(0, p);
  return std::string(s);
}

}  // namespace

Profile parse_qnn_csv(std::string_view text, const std::string& name) {
  Profile prof;
  prof.format = Format::kQnnCsv;
  prof.tool = "qnn-profile-viewer";
  LineReader lines(text);
  std::string_view line;
  auto at = [&](int ln) { return name + ":" + std::to_string(ln) + ": "; };

  // 1. Version lines up to the header; the header maps our columns to positions.
  std::array<size_t, 7> pos{};
  bool header = false;
  while (lines.next(line)) {
    std::string_view t = trim(line);
    if (!t.empty() && t.front() == '"') t.remove_prefix(1);
    if (starts_with(t, "Msg Timestamp")) {
      auto fields = split_csv_line(line, name, lines.line_no());
      std::string missing;
      for (size_t c = 0; c < kColumns.size(); ++c) {
        size_t k = 0;
        while (k < fields.size() && fields[k] != kColumns[c]) ++k;
        if (k == fields.size()) missing += std::string(missing.empty() ? "" : ", ") + "\"" + kColumns[c] + "\"";
        pos[c] = k;
      }
      if (!missing.empty()) throw Error(at(lines.line_no()) + "header lacks column " + missing);
      header = true;
      break;
    }
    if (!t.empty()) {
      std::string l(t);
      if (!prof.tool_version.empty()) prof.tool_version += "; ";
      prof.tool_version += l;
    }
  }
  if (!header)
    throw Error(name + ":" + std::to_string(lines.line_no()) +
                ": no header line starting \"Msg Timestamp\" (is this qnn-profile-viewer --output CSV?)");
  size_t ncol = 0;
  for (size_t p : pos) ncol = std::max(ncol, p + 1);

  // 2. EXECUTE rows, grouped into inferences.
  std::vector<Inference> infs;
  std::vector<std::string> fields;
  while (lines.next(line)) {
    if (trim(line).empty()) continue;
    fields = split_csv_line(line, name, lines.line_no());
    if (fields.size() < ncol)
      throw Error(at(lines.line_no()) + "row has " + std::to_string(fields.size()) + " fields, the header " +
                  std::to_string(ncol) + " (a missing column?)");
    const std::string& message = fields[pos[kMessage]];
    if (message != "EXECUTE") continue;  // INIT, COMPOSE GRAPHS, FINALIZE, DE-INIT, EXECUTE IPS
    const std::string& unit = fields[pos[kUnit]];
    if (unit != "US" && unit != "CYCLES" && unit != "COUNT" && unit != "BYTES" && unit != "INF/SEC")
      throw Error(at(lines.line_no()) + "unknown unit \"" + unit + "\" (expected US, CYCLES, COUNT, BYTES or INF/SEC)");
    double value = 0;
    if (!parse_double(fields[pos[kTime]], value))
      throw Error(at(lines.line_no()) + "Time \"" + fields[pos[kTime]] + "\" is not a number");
    if (value < 0) throw Error(at(lines.line_no()) + "negative Time " + fields[pos[kTime]]);
    const std::string& level = fields[pos[kLevel]];
    if (level != "ROOT" && level != "SUB-EVENT")
      throw Error(at(lines.line_no()) + "unknown Event Level \"" + level + "\" (expected ROOT or SUB-EVENT)");
    const std::string& source = fields[pos[kSource]];
    if (source != "NETRUN" && source != "BACKEND")
      throw Error(at(lines.line_no()) + "unknown Timing Source \"" + source + "\" (expected NETRUN or BACKEND)");
    const std::string& id = fields[pos[kIdentifier]];
    std::string seen_key = id + "|" + unit;
    if (infs.empty() || infs.back().seen.count(seen_key)) {
      if (!infs.empty()) infs.back().end_op = prof.ops.size();
      infs.emplace_back();
      infs.back().first_op = prof.ops.size();
    }
    Inference& inf = infs.back();
    inf.seen.insert(seen_key);
    if (level == "SUB-EVENT") {
      if (unit != "CYCLES") throw Error(at(lines.line_no()) + "per-op row in " + unit + ", expected CYCLES");
      OpRecord op;
      op.inference = static_cast<int>(infs.size() - 1);
      op.name = op_name(id);
      op.cycles = static_cast<int64_t>(value);
      op.compute_unit = "HTP";
      prof.ops.push_back(std::move(op));
    } else if (source == "NETRUN" && unit == "US") {
      inf.netrun_us = value;
    } else if (starts_with(id, "Accelerator (execute excluding wait) time") && unit == "US") {
      inf.accel_excl_wait_us = value;
    } else if (starts_with(id, "Accelerator (execute) time")) {
      if (unit == "US") inf.accel_us = value;
      if (unit == "CYCLES") inf.accel_cycles = value;
    }
  }
  if (!infs.empty()) infs.back().end_op = prof.ops.size();
  if (infs.empty()) throw Error(name + ": no EXECUTE rows");

  // 3. Per-op time from the inference's accelerator time over its cycles.
  std::vector<double> accel, excl, netrun;
  for (const auto& inf : infs) {
    if (inf.accel_us) accel.push_back(*inf.accel_us / 1000.0);
    if (inf.accel_excl_wait_us) excl.push_back(*inf.accel_excl_wait_us / 1000.0);
    if (inf.netrun_us) netrun.push_back(*inf.netrun_us / 1000.0);
    if (inf.accel_us && inf.accel_cycles && *inf.accel_cycles > 0) {
      double ms_per_cycle = *inf.accel_us / *inf.accel_cycles / 1000.0;
      for (size_t i = inf.first_op; i < inf.end_op; ++i)
        prof.ops[i].ms = static_cast<double>(*prof.ops[i].cycles) * ms_per_cycle;
    }
  }

  // 4. The graph's time: the accelerator boundary when reported, else excluding wait, else NetRun.
  LayerRecord total;
  auto pick = [&](const std::vector<double>& v, const char* boundary) {
    total.ms = median(v);
    total.samples = static_cast<int>(v.size());
    prof.boundary = boundary;
  };
  if (!accel.empty()) pick(accel, "accelerator");
  else if (!excl.empty()) pick(excl, "accelerator_excl_wait");
  else if (!netrun.empty()) pick(netrun, "netrun");
  else throw Error(name + ": EXECUTE rows have no graph time (Accelerator (execute) time or NetRun in US)");
  prof.layers.push_back(total);
  auto note = [&](const char* what, const std::vector<double>& v) {
    if (v.empty()) return;
    if (!prof.notes.empty()) prof.notes += "; ";
    prof.notes += std::string(what) + " median " + std::to_string(median(v)) + " ms over " + std::to_string(v.size());
  };
  prof.notes = std::to_string(infs.size()) + " inferences";
  note("netrun", netrun);
  note("accelerator", accel);
  note("accelerator_excl_wait", excl);
  return prof;
}

}  // namespace layoutx::db
