#include "cli/public_ratios_output.h"

#include <cmath>
#include <iostream>

#include "cli/table.h"
#include "support/json_writer.h"

namespace layoutx::cli {

namespace {

void write_json(const std::vector<explorer::ShapeSet>& sets, const std::string& source) {
  JsonWriter w(std::cout);
  w.begin_object();
  w.field("calibration_source", source);
  w.key("sets").begin_array();
  for (const auto& s : sets) {
    w.begin_object();
    w.field("id", s.id);
    w.field("model", s.model);
    w.field("chip", s.chip);
    w.field("reference", s.reference->key);
    w.field("reference_device_ms", s.reference_device_ms);
    w.key("ratios").begin_array();
    for (const auto& r : s.ratios) {
      w.begin_object();
      w.field("key", r.record->key);
      w.field("published", r.published);
      w.field("predicted", r.predicted);
      w.key("members_5_95").value(std::vector<double>{r.low, r.high});
      w.field("device_ms", r.device_ms);
      w.end_object();
    }
    w.end_array();
    w.field("approximations", s.approximations);
    w.key("not_priced").begin_array();
    for (const auto& [r, why] : s.not_priced) {
      w.begin_object();
      w.field("key", r->key);
      w.field("why_not", why);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace

void print_public_ratios(const std::vector<explorer::ShapeSet>& sets, const std::string& chip, const std::string& source,
                         bool json) {
  if (json) return write_json(sets, source);
  std::cout << "ratios within one source's per-graph timings: each record's time over its set's reference, published "
               "beside layoutx's (its parts priced on "
            << chip << "; a factor common to the parts, the chip's or the exporter's, cancels; a chip whose compute "
               "and bandwidth differ from the device's in other proportions moves them; "
            << source << ")\n";
  if (sets.empty()) std::cout << "no set of per-graph timings with two priced records\n";
  for (const auto& s : sets) {
    std::cout << "\n" << s.id << ": " << s.model << " on " << s.chip << ", reference " << s.reference->key << " ("
              << fmt(*s.reference->ms_per_graph, 3) << " ms published, " << fmt(s.reference_device_ms, 3)
              << " ms priced on " << chip << ")\n";
    Table t({"record", "published ms", "published ratio", "predicted ratio", "members 5-95%", "log error"});
    for (const auto& r : s.ratios)
      t.add({r.record->key, fmt(*r.record->ms_per_graph, 3), fmt(r.published, 3), fmt(r.predicted, 3),
             "[" + fmt(r.low, 3) + ", " + fmt(r.high, 3) + "]", fmt(std::log(r.predicted / r.published), 2)});
    t.print(std::cout);
    for (const auto& [r, why] : s.not_priced) std::cout << "  not priced: " << r->key << ": " << why << "\n";
    if (!s.approximations.empty()) {
      std::cout << "  approximations:";
      for (const auto& a : s.approximations) std::cout << " " << a << ";";
      std::cout << "\n";
    }
  }
}

}  // namespace layoutx::cli
