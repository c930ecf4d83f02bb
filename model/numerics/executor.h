// The reference executor: runs a built layer graph for one decode step, op by op, exactly as
// built (so a wrong graph gives a wrong answer), in float or double arithmetic (Eigen matrix
// products for MatMul; numpy/ONNX broadcasting for elementwise ops and MatMul batch axes).
#pragma once
#include <initializer_list>
#include <map>
#include <memory>
#include <string>

#include "model/graph.h"
#include "model/numerics/prepared_weights.h"
#include "model/numerics/quantize.h"
#include "model/numerics/tensor.h"
#include "model/numerics/weights.h"

namespace layoutx::model::numerics {

// The static uint16 ranges of a graph's activations, by op name, as a calibration pass found
// them (min/max over sample inputs, with 0).
using ActivationRanges = std::map<std::string, U16Range>;

struct ExecOptions {
  // false: every op in the arithmetic type T, dtypes ignored (checks the graph's function).
  // true: the graph's dtypes are simulated: f16 outputs rounded to float16; u16 outputs and
  // Converts to u16 quantized per tensor (quantize.h); i8 weights quantized per output
  // channel, i4 weights by `quantizer`; f16/u16 weights rounded/quantized (a weight's range is
  // its own). Data movement (Reshape, Slice) keeps its operand's values (a slice shares its
  // operand's encoding).
  bool simulate_precision = false;
  // Without simulate_precision: still simulate the u8 cache encodings (kv_dtype=u8 Converts,
  // by `ranges`), as a float graph with QuantizeLinear/DequantizeLinear pairs at those Converts
  // computes (emit's QDQ form). Everything else stays float.
  bool simulate_cache_codes = false;
  WeightQuantizer quantizer = kDefaultW4Quantizer;  // 4-bit weights (simulating only)
  // Simulating: the u16 activations' static ranges (calibrated, as the device's encodings are
  // fixed at conversion): values outside are clipped. An op without an entry, or every op when
  // null, is encoded over its own range at each step (a per-step calibration: optimistic).
  const ActivationRanges* ranges = nullptr;
  // Calibration: every u16 activation op's value widens its entry here (before any encoding;
  // the pass that calibrates runs without simulation, as a converter's calibration runs the
  // float graph). Null: nothing recorded.
  ActivationRanges* record = nullptr;
};

// Tensors bound to graph inputs or read from graph outputs, by role.
template <typename T>
using RoleTensors = std::map<Role, Tensor<T>>;

template <typename T>
class Executor {
 public:
  // Prepares the weights once (conversion, quantization). Throws Error if a weight the graph
  // needs is missing or has the wrong shape.
  Executor(const LayerGraph& graph, const LayerWeights& weights, ExecOptions options = {});
  // The same over weights prepared (and kept) by `weights`, which must have been made with the
  // same simulate_precision and must outlive the executor; executors of many variants can
  // share them.
  Executor(const LayerGraph& graph, PreparedWeights<T>& weights, ExecOptions options = {});
  ~Executor();  // hands its large buffers to the thread's BufferPool
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // One decode step: `inputs` must hold every Input role of the graph with its shape. Returns
  // every Output role (a copy: step() and output() read them without one). Throws Error naming
  // the op if an operand's shape does not fit it.
  RoleTensors<T> run(const RoleTensors<T>& inputs);

  // One decode step, outputs left in place. `inputs` may be read through until step returns
  // (an input whose dtype changes nothing is not copied). `in_dtype`: roles whose bound values
  // the caller guarantees are values of the input's dtype already (the runtime's caches, made
  // of zeros and the graph's own f16 outputs): bound as they are, not checked or simulated.
  void step(const RoleTensors<T>& inputs, std::initializer_list<Role> in_dtype = {});
  // An Output role's value after the last step(). Mutable so that a caller may swap a buffer of
  // the same size in for it (the runtime hands a returned cache window back as the next step's
  // input that way, without a copy): the next step overwrites whatever it holds. Throws Error if
  // the graph has no such output.
  Tensor<T>& output(Role role);
  // Copies of every Output role's value after the last step().
  RoleTensors<T> outputs() const;

  const LayerGraph& graph() const { return graph_; }
  // From now on step() computes only what the Output roles `keep` need (their ancestors) and
  // binds only the inputs they read; the other outputs keep stale values. The roles must be
  // outputs of the graph (throws Error otherwise). Used to compute a token's new K/V entry
  // without its attention and MLP.
  void keep_only(std::initializer_list<Role> keep);
  // Calibration (options.record): whether the next steps widen the recorded ranges (default on).
  void set_recording(bool on) { recording_ = on; }

 private:
  void init();  // the constructors' common part: graph analysis, weights, constants
  // t.data resized to n elements for the caller to overwrite every one (recycled storage).
  static void size_for_overwrite(Tensor<T>& t, size_t n);
  void bind_input(Vertex v, const RoleTensors<T>& inputs, bool in_dtype);
  void pass_through(Vertex v);
  void eval(Vertex v);
  // The values of v's dtype (f16 rounding, u16 quantization) from src into dst, in one pass
  // (src == dst allowed); a plain copy for dtypes that change nothing or without simulation.
  void simulate_dtype(Vertex v, const T* src, T* dst, size_t n) const;
  void simulate_dtype(Vertex v, Tensor<T>& t) const { simulate_dtype(v, t.data.data(), t.data.data(), t.data.size()); }
  // True if v's dtype changes the values simulate_dtype is given (never without simulation).
  bool changes_values(Vertex v) const;
  const Tensor<T>& value(Vertex v) const { return *ptr_[v]; }

  LayerGraph graph_;
  ExecOptions options_;
  std::unique_ptr<PreparedWeights<T>> owned_weights_;  // first constructor only
  PreparedWeights<T>* weights_;
  std::vector<Vertex> order_;
  std::vector<std::vector<Vertex>> operands_;
  std::vector<Tensor<T>> own_;           // per-vertex storage (constants persist across steps)
  std::vector<const Tensor<T>*> ptr_;  // the value of each vertex this step (own_, a weight, or a bound input)
  std::vector<int> users_;             // operand slots each vertex feeds (1: its only reader is one op)
  // Simulating: every value of the vertex is already a float16 value (f16 ops and data movement
  // of them), so rounding it to f16 again would change nothing and is skipped.
  std::vector<bool> half_exact_;
  std::vector<const U16Range*> range_;  // per vertex: its static u16 range (options_.ranges), or null
  std::vector<U16Range*> record_;       // per vertex: where calibration widens its range, or null
  bool recording_ = true;
  std::vector<std::pair<Role, Vertex>> outputs_;
  std::vector<bool> needed_;  // per vertex: evaluated by step() (all unless keep_only)
};

extern template class Executor<float>;
extern template class Executor<double>;

}  // namespace layoutx::model::numerics
