// Upper bounds of the sizes layoutx accepts, in one place. Every integer read from a model YAML,
// a HF config.json, a layout file or a flag is range-checked in 64 bits against these before it
// is narrowed to int; above a bound the input is an error (exit 2) before anything is allocated.
// Each bound is far above every shipped or public model and well below what exhausts an 8 GB
// machine or overflows an int product (e.g. heads * head_dim, context * kv_heads * head_dim).
// The README ("Limits") lists them; keep the two in step.
#pragma once
#include <cstdint>

namespace layoutx::model::limits {

inline constexpr int64_t kMaxContext = 1 << 20;          // tokens (1,048,576); --ctx, context:, sliding_window
inline constexpr int64_t kMaxLayers = 1024;               // layers.count, num_hidden_layers
inline constexpr int64_t kMaxHidden = 65536;              // hidden_size
inline constexpr int64_t kMaxIntermediate = 262144;       // intermediate_size
inline constexpr int64_t kMaxHeads = 1024;                // num_attention_heads, num_key_value_heads
inline constexpr int64_t kMaxHeadDim = 1024;              // head_dim
inline constexpr int64_t kMaxVocab = 1 << 22;             // vocab_size (4,194,304)

// A measured layer: one decode step of one layer takes more than 0 and at most this (10 s; the
// slowest layer on record is a few ms, so anything near this is a unit mistake such as
// microseconds as ms). The one rule of the measurement reader (calibrate, calibrate --data,
// ingest of our YAML) and of ingest's other formats (db/ingest_checks.h). Contexts are in
// [kMinContext, kMaxContext] everywhere: flags, model files, layout files, measurement records.
inline constexpr double kMaxLayerMs = 10000.0;
inline constexpr int64_t kMinContext = 2;

// The fidelity check (select, step, whatif) runs the numerics on a proxy layer whose K/V cache
// grows with the context; above kMaxFidelityContext it is skipped and the output says so.
inline constexpr int64_t kMaxFidelitySteps = 4096;        // --fidelity-steps, --calibration-steps
inline constexpr int64_t kMaxFidelityContext = 65536;     // tokens
inline constexpr int64_t kMaxFidelityElements = int64_t{1} << 26;  // proxy weights + K/V cache (tensor_budget.h)

// Verbs that materialise the full-width layer's tensors: parity runs it in float64 and float32
// over the history (its cache is ctx x kv_heads x head_dim per side, its time grows with
// ctx x steps); emit and measure write and run its ONNX with caches of that size.
inline constexpr int64_t kMaxTensorContext = 65536;       // parity / emit / measure --ctx
inline constexpr int64_t kMaxParitySteps = 4096;          // parity --steps
// Elements of one layer's weights plus its K/V cache those verbs may materialise: 2^29 is 2 GiB
// of float32 (4 GiB for parity's float64 reference); every public model's layer fits at 64K.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 29;

// A device's hypotheses are every combination of one option per axis of its hypothesis_axes
// (costmodel/device_spec.h), and `calibrate` fits each with its leave-one-out refits: the shipped
// 96 take about half a second, so 1024 is about five. A file whose axes multiply past this is an
// error, not a hang.
inline constexpr int64_t kMaxHypotheses = 1024;

// A measurement record's `export: N` (model/measurement_file.h): calibrate's replay refits every
// hypothesis once per export after the first, so the exports a file may name are bounded like
// the hypotheses are (16 replays of the shipped 96 hypotheses take a few seconds).
inline constexpr int64_t kMaxExports = 16;

}  // namespace layoutx::model::limits
