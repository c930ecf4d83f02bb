// Public decode timings of Snapdragon NPUs (issue 36): the reader of the public timings file
// (shared/data/public-snapdragon-timings.yaml; how to read it: shared/docs/public-timings.md).
// One parser for the format: every key of a record, chip and model is known to it (an unknown one
// is an error naming file:line:col and the key path, as in every layoutx file); a field the
// source does not give says `unknown`, `unverified` or `not_applicable`, which the reader keeps
// apart from a value (std::nullopt plus the word). Free-text fields (details, sources, notes) are
// read as text or skipped as allowed, never interpreted.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace layoutx::costmodel {

enum class PublicKind { kDecodeRate, kDecodeFloor, kGraphTime, kOpCycles, kOpCounts, kKernelTime };
enum class PublicUse { kCalibration, kInequality, kSuspect, kShapeOnly, kOpLevel, kSanityOnly };
// What a figure contains (the file's `includes` vocabulary).
enum class PublicIncludes {
  kGraphExecuteOnly,      // on-device graph execution only
  kRunnerDecodeInclHost,  // the runner's decode rate: host KV write, sampling, runner loop in; prefill out
  kRunnerEndToEnd,        // a runner rate, prefill not said; host terms in
  kIncludesPrefill,       // generated tokens / whole inference time (CI inference_speed)
  kAppEndToEnd,
  kRuntimeBenchmark,      // another runtime's own benchmark
  kKernelOnly,
  kNotTime,
};
const char* to_string(PublicKind k);
const char* to_string(PublicUse u);
const char* to_string(PublicIncludes i);

// A field the source may leave out: its value, or the word the file gives instead.
template <typename T>
struct Stated {
  std::optional<T> value;
  std::string word;  // "unknown", "unverified", "not_applicable" (or the file's text) when no value
  bool known() const { return value.has_value(); }
};

struct PublicLayout {
  std::string exporter;            // the vocabulary's layout.exporter
  Stated<int> graphs;              // context binaries / shards / parts of the model
  std::string this_record;         // a per-graph record's graph, as written ("part 2 (layers 0-11)")
  std::string kv_dtype;            // u8, u16, unknown
  std::string kv_io;               // one_tensor_per_layer, per_head, per_kv_head, in_graph, unknown
  Stated<bool> k_transposed;
  std::string kv_update;           // smart_mask, shift_pointer, in_graph, unknown
  Stated<bool> new_entries_only;   // the graph returns only the new K/V entries
  Stated<int> weight_bits;
  std::string granularity;         // per_channel, block, unknown
  Stated<int> block_size;          // block granularity only
  Stated<int> activation_bits;
  Stated<int> lm_head_bits;
  std::vector<std::string> exceptions;  // layers the recipe keeps at another width, as written
  std::string attention_form;      // sha, unknown
  Stated<bool> masked_softmax;
  std::string sliding_window;      // as written (not_applicable, or a sentence)
  Stated<int> context_length;
  Stated<int> ar_decode;           // tokens per decode call (1: AR-1)
  Stated<int> ar_this_graph;       // a per-graph record's own AR
};

struct PublicRecord {
  std::string key, id;             // key unique; id shared by one source's records (E1, A11, T1, ...)
  std::string where;               // file:line:col of the record
  PublicKind kind = PublicKind::kDecodeRate;
  PublicUse use = PublicUse::kCalibration;
  std::string model, chip;         // keys of the file's models and chips ("unknown" chip allowed)
  std::string device, runtime, qairt_version;
  PublicLayout layout;
  // The figure (one of them, by kind): tokens/s or ms a token (decode_rate), the floor
  // (decode_floor), ms a graph call (graph_time), ms an op (kernel_time); none for op records.
  std::optional<double> tokens_per_s, ms_per_token, ms_per_graph, tokens_per_s_at_least, ms_per_op;
  PublicIncludes includes = PublicIncludes::kNotTime;
  Stated<double> rel_sd;           // relative noise to assume
  std::string confidence;          // read-it, secondary
  std::string cited;               // the source in one line: repo@commit path, PR, issue or index id

  // The record's time per decode token (ms) when it has one: 1000 / tokens_per_s, ms_per_token.
  std::optional<double> ms_token() const;
};

struct PublicChip {
  std::string key, name, htp_arch;  // htp_arch: "v79", or "unverified"
  Stated<double> vtcm_mb;
  Stated<double> dram_peak_gbps;    // a chip with two variants (x2_elite) keeps the lower peak here
  std::string dram, source, where;
};

struct PublicModel {
  std::string key, hf_repo, activation, where;
  int layers = 0, hidden = 0, intermediate = 0, heads = 0, kv_heads = 0, head_dim = 0, vocab = 0;
  Stated<bool> tied_embeddings;
  bool qkv_bias = false, qk_norm = false;
  std::string sliding_window;       // "none", or "window N: pattern" as written
  std::optional<int> window;        // the sliding window's tokens when the model has one
  Stated<double> params;
};

struct PublicTimings {
  std::string path;
  std::vector<PublicRecord> records;        // file order
  std::map<std::string, PublicChip> chips;
  std::map<std::string, PublicModel> models;
};

// Reads and checks the file: every problem reported at once (Error listing each as
// "file:line:col: key.path: what"), a record's model and chip checked against the file's own
// sections, keys unique.
PublicTimings read_public_timings(const std::string& path);

// The shipped copy, configs/public/public-snapdragon-timings.yaml (under $LAYOUTX_CONFIGS when set).
std::string shipped_public_timings();

}  // namespace layoutx::costmodel
