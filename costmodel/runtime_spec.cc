#include "costmodel/runtime_spec.h"

#include "support/yaml_reader.h"

namespace layoutx::costmodel {

namespace {

// `key: {value: V, low: L, high: H, reason: "..."}` with 0 <= low <= value <= high.
RuntimeTerm term(MapReader& parent, const std::string& key, ErrorList& errors) {
  RuntimeTerm t;
  YAML::Node node = parent.child(key, true);
  if (!node.IsDefined() || node.IsNull()) return t;
  const size_t before = errors.messages().size();
  MapReader m(parent.file(), node, parent.key_path(key), errors);
  if (!m.ok()) return t;  // MapReader said it is not a map
  t.value = m.number("value", true, 0).value_or(0);
  t.low = m.number("low", true, 0).value_or(0);
  t.high = m.number("high", true, 0).value_or(0);
  t.reason = m.string("reason", true).value_or("");
  if (errors.messages().size() == before && !(t.low <= t.value && t.value <= t.high))
    m.error("value", "expected low <= value <= high, got " + std::to_string(t.low) + " <= " + std::to_string(t.value) +
                         " <= " + std::to_string(t.high));
  m.finish();
  return t;
}

}  // namespace

RuntimeSpec at_end(const RuntimeSpec& r, RuntimeEnd end) {
  RuntimeSpec e = r;
  const bool slow = end == RuntimeEnd::kSlow;
  for (RuntimeTerm* t : {&e.host_call_us, &e.sampling_ns_per_vocab, &e.wakeup_us}) t->value = slow ? t->high : t->low;
  // A slow copy, and a small saving from joining graphs, cost more.
  for (RuntimeTerm* t : {&e.host_copy_gbps, &e.merge_saving_us}) t->value = slow ? t->low : t->high;
  return e;
}

RuntimeSpec parse_runtime(const std::string& file, const YAML::Node& node, ErrorList& errors) {
  RuntimeSpec r;
  if (!node.IsDefined() || node.IsNull()) return r;
  MapReader m(file, node, "runtime", errors);
  if (!m.ok()) return r;
  r.present = true;
  r.host_call_us = term(m, "host_call_us", errors);
  r.sampling_ns_per_vocab = term(m, "sampling_ns_per_vocab", errors);
  r.host_copy_gbps = term(m, "host_copy_gbps", errors);
  if (r.host_copy_gbps.low <= 0 && r.host_copy_gbps.high > 0) m.error("host_copy_gbps", "low must be above 0 (a rate)");
  r.rpc_polling_us = m.number("rpc_polling_us", true, 0).value_or(0);
  r.wakeup_us = term(m, "wakeup_us", errors);
  r.merge_saving_us = term(m, "merge_saving_us", errors);
  r.max_binary_gb = m.number("max_binary_gb", true, 0).value_or(0);
  r.max_context_gb = m.number("max_context_gb", true, 0).value_or(0);
  r.max_binaries = static_cast<int>(m.integer("max_binaries", true, 0, 1 << 20).value_or(0));
  m.finish();
  return r;
}

}  // namespace layoutx::costmodel
