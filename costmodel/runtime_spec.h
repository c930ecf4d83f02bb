// What a whole decode step pays beyond its graphs (issue 35): the host's per-call seam, the
// runner's KV update and sampling, the RPC wake-up of a long call, and the limits a partition
// must stay under. The device file's `runtime:` block; every term a prior with a range and its
// source, never fitted (no timing of a whole step of this device exists). A device without the
// block prices graph execution only and says so.
#pragma once
#include <string>

#include "support/error.h"

namespace YAML {
class Node;
}

namespace layoutx::costmodel {

// One prior: the value a point prediction uses and the range an interval carries (the
// alternatives the evidence allows, not a normal sd), with why.
struct RuntimeTerm {
  double value = 0, low = 0, high = 0;
  std::string reason;
};

struct RuntimeSpec {
  bool present = false;           // false: no `runtime:` block (graph execution only)
  RuntimeTerm host_call_us;       // host side of one graph call beyond the device's execute term
  RuntimeTerm sampling_ns_per_vocab;  // the runner's sampling over the logits, per vocabulary entry
  RuntimeTerm host_copy_gbps;     // host memcpy rate: the new K/V entries, a window's shift or copy
  double rpc_polling_us = 0;      // a call longer than this (burst mode's polling window) pays a wake-up
  RuntimeTerm wakeup_us;          // ... this one
  // What joining two graphs into one part saves beyond the calibrated per-execute term, per joined
  // boundary (the hidden state's conversion and copy across it, a weight-prefetch restart at the
  // next graph's start): the hypotheses a part's interval carries (0 at value: the execute only).
  RuntimeTerm merge_saving_us;
  // Limits of a partition (0: none known).
  double max_binary_gb = 0;       // a context binary file
  double max_context_gb = 0;      // one context: its weights and its I/O tensors
  int max_binaries = 0;           // context binaries one process loads
};

// `r` with every term's value at one end of its range: the end where the step is fastest (lowest
// costs, the highest copy rate and merge saving) or slowest. What an interval's bounds and a robustness check use.
enum class RuntimeEnd { kFast, kSlow };
RuntimeSpec at_end(const RuntimeSpec& r, RuntimeEnd end);

// Reads the `runtime:` map of `file` (errors collected as file:line:col: runtime.key: what).
RuntimeSpec parse_runtime(const std::string& file, const YAML::Node& node, ErrorList& errors);

}  // namespace layoutx::costmodel
