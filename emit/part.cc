#include "emit/part.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "emit/history.h"
#include "emit/onnx_writer.h"
#include "emit/ort_runner.h"
#include "emit/weights.h"
#include "model/builder.h"
#include "model/design_space.h"
#include "model/numerics/runtime.h"
#include "support/atomic_file.h"
#include "support/error.h"

namespace layoutx::emit {

namespace num = model::numerics;

namespace {

std::string layer_prefix(const Part& p, size_t member) { return "layer" + std::to_string(p.layers.at(member).index) + "/"; }

// A layer graph's own boundary tensors (named by role), which keep a file- and QNN-safe name in a
// part ("layer3_k_cache"); its ops and weights are "layer3/<name>".
bool io_role_name(const std::string& name) {
  for (const char* io : {"k_cache", "v_cache", "k_out", "v_out"})
    if (name == io) return true;
  return false;
}

// The per-step inputs every layer of a type sees alike.
bool shared_input(const std::string& name) { return name == "mask" || name == "rope_cos" || name == "rope_sin"; }

// A layer's per-step tensors by role, under the part's names: its inputs (hidden_in only for the
// first layer) into `in`, its outputs (hidden_out only for the last) into `out`.
void add_named(const Part& p, size_t i, const num::RoleTensors<float>& roles, TensorMap& into, bool inputs) {
  for (const auto& [role, t] : roles) {
    const std::string own = model::role_name(role);
    if (inputs && own == "hidden_in" && i > 0) continue;
    if (!inputs && own == "hidden_out" && i + 1 < p.layers.size()) continue;
    into[part_tensor_name(p, i, own)] = Tensor{t.shape, t.data};
  }
}

double snr_db(double signal, double noise) {
  return noise == 0 ? std::numeric_limits<double>::infinity() : 10.0 * std::log10(signal / noise);
}

}  // namespace

std::string part_name(const std::vector<int>& layers) {
  return layers.empty() ? "layers_none" : "layers_" + std::to_string(layers.front()) + "_" + std::to_string(layers.back());
}

Part model_part(const model::ModelSpec& m, int ctx, const std::vector<int>& layers,
                const std::map<model::LayerType, model::Variant>& variants,
                const std::function<model::numerics::LayerWeights(int, const model::LayerSpec&)>& weights) {
  Part p;
  if (layers.empty()) throw Error("a part needs at least one layer");
  p.name = part_name(layers);
  for (int i : layers) {
    if (i < 0 || i >= m.num_layers())
      throw Error(p.name + ": " + m.name + " has no layer " + std::to_string(i));
    const model::LayerType type = m.layer_types[static_cast<size_t>(i)];
    auto v = variants.find(type);
    if (v == variants.end())
      throw Error(p.name + ": no " + model::to_string(type) + " layout for layer " + std::to_string(i));
    const model::LayerSpec L = m.layer(type, ctx);
    PartLayer l;
    l.index = i;
    l.graph = std::make_unique<model::LayerGraph>(model::build_layer_graph(L, v->second));
    if (weights) l.weights = weights(i, L);
    p.layers.push_back(std::move(l));
  }
  check_part(p);
  return p;
}

void check_part(const Part& p) {
  if (p.layers.empty()) throw Error(p.name + ": a part needs at least one layer");
  const auto& first = p.layers.front().graph->layer;
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const auto& m = p.layers[i];
    const std::string where = p.name + ": layer " + std::to_string(m.index);
    if (i > 0 && m.index != p.layers[i - 1].index + 1)
      throw Error(where + ": a part's layers are consecutive (after layer " + std::to_string(p.layers[i - 1].index) + ")");
    if (m.graph->layer.hidden != first.hidden)
      throw Error(where + ": hidden size " + std::to_string(m.graph->layer.hidden) + ", the part's is " +
                  std::to_string(first.hidden));
    for (size_t j = 0; j < i; ++j) {
      const auto& o = *p.layers[j].graph;
      if (o.layer.type != m.graph->layer.type) continue;
      const auto& l = m.graph->layer;
      if (o.variant.key() != m.graph->variant.key() || o.layer.cache_entries != l.cache_entries ||
          o.layer.window != l.window || !(o.layer.rope == l.rope))
        throw Error(where + ": its " + model::to_string(o.layer.type) + " layout differs from layer " +
                    std::to_string(p.layers[j].index) + "'s; the layers of one type in a part share the mask and "
                    "rotary tables, so they take one layout");
      break;
    }
  }
}

std::string part_tensor_name(const Part& p, size_t member, const std::string& name) {
  if (name.empty()) return name;
  const bool last = member + 1 == p.layers.size();
  const std::string layer = "layer" + std::to_string(p.layers.at(member).index);
  if (name == "hidden_in") return member == 0 ? name : "layer" + std::to_string(p.layers.at(member - 1).index) + "_hidden_out";
  if (name == "hidden_out") return last ? name : layer + "_" + name;
  if (shared_input(name)) return std::string(model::to_string(p.layers.at(member).graph->layer.type)) + "_" + name;
  if (io_role_name(name)) return layer + "_" + name;
  return layer + "/" + name;
}

onnx::ModelProto part_to_onnx(const Part& p) {
  check_part(p);
  onnx::ModelProto part;
  auto* graph = part.mutable_graph();
  std::set<std::string> inputs_added;
  std::vector<const model::LayerGraph*> graphs;
  std::string layers;
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const auto& m = p.layers[i];
    graphs.push_back(m.graph.get());
    onnx::ModelProto one = to_onnx(*m.graph, LayerWeightsSource(m.weights));
    auto rename = [&](const std::string& s) { return part_tensor_name(p, i, s); };
    if (i == 0) {  // the model's header: the first layer's, with the part's identity
      part.set_ir_version(one.ir_version());
      part.set_producer_name(one.producer_name());
      part.set_producer_version(one.producer_version());
      *part.mutable_opset_import() = one.opset_import();
      graph->set_name("layoutx_" + p.name);
    }
    layers += (layers.empty() ? "" : ",") + std::to_string(m.index);
    auto* g = one.mutable_graph();
    for (auto& n : *g->mutable_node()) {
      n.set_name(layer_prefix(p, i) + n.name());
      for (auto& s : *n.mutable_input()) s = rename(s);
      for (auto& s : *n.mutable_output()) s = rename(s);
      *graph->add_node() = std::move(n);
    }
    for (auto& t : *g->mutable_initializer()) {
      t.set_name(rename(t.name()));
      *graph->add_initializer() = std::move(t);
    }
    for (auto& vi : *g->mutable_value_info()) {
      vi.set_name(rename(vi.name()));
      *graph->add_value_info() = std::move(vi);
    }
    for (auto& vi : *g->mutable_input()) {
      if (vi.name() == "hidden_in" && i > 0) continue;  // the previous layer's hidden_out, inside
      vi.set_name(rename(vi.name()));
      if (inputs_added.insert(vi.name()).second) *graph->add_input() = std::move(vi);
    }
    for (auto& vi : *g->mutable_output()) {
      if (vi.name() == "hidden_out" && i + 1 < p.layers.size()) continue;  // feeds the next layer
      vi.set_name(rename(vi.name()));
      *graph->add_output() = std::move(vi);
    }
  }
  part.set_doc_string("one decode step of decoder layers " + layers + " as one graph (a context binary's part)");
  auto meta = [&](const std::string& k, const std::string& v) {
    auto* prop = part.add_metadata_props();
    prop->set_key(k);
    prop->set_value(v);
  };
  meta("layoutx.part", p.name);
  meta("layoutx.layers", layers);
  meta("layoutx.ctx", std::to_string(p.layers.front().graph->layer.context));
  check_joined_onnx(part, graphs, [&](size_t i, const std::string& s) { return part_tensor_name(p, i, s); });
  return part;
}

IoSignature part_io_signature(const Part& p) {
  check_part(p);
  IoSignature sig;
  std::set<std::string> seen;
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const IoSignature one = io_signature(*p.layers[i].graph);
    for (auto t : one.inputs) {
      if (t.name == "hidden_in" && i > 0) continue;
      t.name = part_tensor_name(p, i, t.name);
      if (seen.insert(t.name).second) sig.inputs.push_back(std::move(t));
    }
    for (auto t : one.outputs) {
      if (t.name == "hidden_out" && i + 1 < p.layers.size()) continue;
      t.name = part_tensor_name(p, i, t.name);
      sig.outputs.push_back(std::move(t));
    }
  }
  return sig;
}

std::vector<std::pair<TensorMap, TensorMap>> part_step_io(const Part& p, int steps, uint64_t seed) {
  check_part(p);
  std::vector<std::pair<TensorMap, TensorMap>> io(static_cast<size_t>(steps));
  num::Sequence hidden = num::token_inputs(p.layers.front().graph->layer.hidden, steps, seed);
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const auto& m = p.layers[i];
    // Each layer over the whole history, fed the previous layer's outputs: a decode step's
    // layers depend on each other only through the hidden state.
    hidden = num::simulate<float>(*m.graph, m.weights, hidden, {},
                                  [&](int t, const num::RoleTensors<float>& in, const num::RoleTensors<float>& out) {
                                    add_named(p, i, in, io[static_cast<size_t>(t)].first, true);
                                    add_named(p, i, out, io[static_cast<size_t>(t)].second, false);
                                  });
  }
  return io;
}

Validation validate_part_in_ort(const Part& p, int steps, uint64_t seed, const std::string& work_dir) {
  // 1. The executor, layer by layer over the history (part_step_io's outputs, every step).
  const auto ref = part_step_io(p, steps, seed);
  const int hidden = static_cast<int>(p.layers.front().graph->layer.hidden);
  const num::Sequence hidden_in = num::token_inputs(hidden, steps, seed);

  // 2. The part as ONNX, step by step in ORT; the harness plays the runtime for each layer's cache.
  ensure_directory(work_dir);
  const std::string model_path = (std::filesystem::path(work_dir) / "part.onnx").string();
  write_onnx(part_to_onnx(p), model_path);
  OrtSession ort(model_path, (std::filesystem::path(work_dir) / "steps").string());
  std::vector<LayerRuntime> runtimes;
  runtimes.reserve(p.layers.size());
  for (const auto& m : p.layers)
    runtimes.emplace_back(*m.graph, static_cast<float>(num::default_mask_value(m.graph->variant.precision())));
  num::Sequence want(static_cast<size_t>(steps)), got(static_cast<size_t>(steps));
  double kv_sig = 0, kv_noise = 0, kv_max = 0;
  for (int t = 0; t < steps; ++t) {
    const auto& h = hidden_in[static_cast<size_t>(t)];
    const Tensor token{{1, hidden}, std::vector<float>(h.begin(), h.end())};
    TensorMap in;
    for (size_t i = 0; i < p.layers.size(); ++i)
      for (auto& [name, tensor] : runtimes[i].inputs(token))
        if (name != "hidden_in" || i == 0) in[part_tensor_name(p, i, name)] = std::move(tensor);
    TensorMap out = ort.run(in);
    const auto& expected = ref[static_cast<size_t>(t)].second;
    const auto& y = out.at("hidden_out").data;
    got[static_cast<size_t>(t)].assign(y.begin(), y.end());
    const auto& r = expected.at("hidden_out").data;
    want[static_cast<size_t>(t)].assign(r.begin(), r.end());
    for (size_t i = 0; i < p.layers.size(); ++i) {
      TensorMap own;
      for (const char* kv : {"k_out", "v_out"}) {
        const std::string name = part_tensor_name(p, i, kv);
        const auto& x = out.at(name).data;
        const auto& e = expected.at(name).data;
        if (x.size() != e.size()) throw Error("part " + p.name + ": " + name + " has " + std::to_string(x.size()) +
                                              " elements, the executor's " + std::to_string(e.size()));
        for (size_t k = 0; k < x.size(); ++k) {
          const double d = x[k] - e[k];
          kv_sig += double{e[k]} * e[k];
          kv_noise += d * d;
          kv_max = std::max(kv_max, std::abs(d));
        }
        own[kv] = out.at(name);
      }
      runtimes[i].absorb(own);
    }
  }

  // 3. Fidelity of ORT against the executor.
  Validation v;
  v.steps = steps;
  v.hidden = num::compare(want, got, hidden_in);
  v.kv_snr_db = snr_db(kv_sig, kv_noise);
  v.kv_max_abs_err = kv_max;
  return v;
}

}  // namespace layoutx::emit
