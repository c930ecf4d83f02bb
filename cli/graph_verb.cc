// layoutx graph: builds one layer variant and prints its ops with shapes, dtypes, MACs, bytes,
// the cache-sized tensors alive at each op (the VTCM live set, as --device holds them) and the
// layer's boundary traffic; as a table, --json, or Graphviz --dot.
#include <algorithm>
#include <iostream>

#include "model/design_space.h"
#include "cli/choice_output.h"
#include "cli/layer_options.h"
#include "cli/table.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "costmodel/device_spec.h"
#include "costmodel/device_live_set.h"
#include "model/analysis.h"
#include "model/builder.h"
#include "model/numerics/runtime.h"
#include "model/param_count.h"
#include "support/json_writer.h"

namespace layoutx::cli {

namespace {

struct GraphArgs {
  LayerOptions layer;
  std::string device = costmodel::kDefaultDevice;  // whose tiling and VTCM the live set is in
  bool json = false;
  bool dot = false;
  bool params = false;  // the whole model's parameter count and layer structure instead of the ops
};

std::string operand_names(const model::LayerGraph& g, model::Vertex v) {
  std::string s;
  for (auto u : g.operands(v)) s += (s.empty() ? "" : " ") + g.op(u).name;
  return s;
}

// What a runtime or a PyTorch form of the layer needs beyond the ops (layoutx.torch reads it).
void write_layer_spec_json(JsonWriter& w, const model::LayerGraph& g) {
  const auto& L = g.layer;
  w.key("layer_spec").begin_object();
  w.field("hidden", L.hidden);
  w.field("intermediate", L.intermediate);
  w.field("heads", L.heads);
  w.field("kv_heads", L.kv_heads);
  w.field("head_dim", L.head_dim);
  w.field("window", L.window);
  w.field("rope_theta", L.rope.theta);
  w.field("rotary_dims", L.rope.rotary_dims);
  w.field("rms_eps", L.rms_eps);
  w.field("activation", model::to_string(L.activation));
  w.field("head_gate", L.head_gate);
  w.field("mask_value", model::numerics::default_mask_value(g.variant.precision()));  // unwritten cache slot
  w.end_object();
}

void print_json(const model::LayerGraph& g, const std::vector<model::OpStats>& st, const model::GraphTotals& t,
                const costmodel::DeviceLiveSet& vt) {
  JsonWriter w(std::cout);
  w.begin_object();
  w.field("variant_key", g.variant.key(model::AxisScope(g.layer)));
  w.field("preset", g.variant.preset(model::AxisScope(g.layer)));
  w.field("layer", model::to_string(g.layer.type));
  w.field("ctx", g.layer.context);
  w.field("cache_entries", g.layer.cache_entries);
  w.field("rotary_dims", g.layer.rope.rotary_dims);
  w.field("precision", model::to_string(g.variant.precision()));
  write_variant_axes_json(w, g.variant, model::AxisScope(g.layer));
  write_layer_spec_json(w, g);
  w.key("ops").begin_array();
  for (auto v : g.topological_order()) {
    const auto& n = g.op(v);
    w.begin_object();
    w.field("id", static_cast<int64_t>(v));
    w.field("name", n.name);
    w.field("kind", model::to_string(n.kind));
    if (n.role != model::Role::kNone) w.field("role", model::role_name(n.role));
    w.key("inputs").begin_array();
    for (auto u : g.operands(v)) w.value(g.op(u).name);
    w.end_array();
    w.key("input_shapes").begin_array();
    for (auto u : g.operands(v)) w.value(g.op(u).shape);
    w.end_array();
    w.field("output_shape", n.shape);
    w.field("dtype", model::to_string(n.dtype));
    w.field("macs", st[v].macs);
    w.field("bytes_read", st[v].bytes_read);
    w.field("bytes_written", st[v].bytes_written);
    w.field("weight_bytes", st[v].weight_bytes);
    w.field("live_bytes", vt.live.live_bytes[v]);
    w.end_object();
  }
  w.end_array();
  w.key("vtcm").begin_object();
  w.field("device", vt.device);
  w.field("cache_sized_min_bytes", vt.min_kib * 1024);
  w.field("peak_live_bytes", vt.live.peak_bytes);
  w.field("peak_at", vt.live.peak_bytes > 0 ? g.op(vt.live.peak_at).name : std::string());
  w.key("knees_mib").value(vt.knees_mib);
  w.end_object();
  w.key("totals").begin_object();
  w.field("macs", t.macs);
  w.field("weight_bytes", t.weight_bytes);
  w.field("bytes_read", t.bytes_read);
  w.field("bytes_written", t.bytes_written);
  w.field("boundary_bytes_in", t.boundary_bytes_in);
  w.field("boundary_bytes_out", t.boundary_bytes_out);
  w.field("op_count", t.op_count);
  w.end_object();
  w.end_object();
}

void print_dot(const model::LayerGraph& g) {
  std::cout << "digraph layer {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  for (auto v : g.topological_order()) {
    const auto& n = g.op(v);
    const char* style = "";
    switch (n.kind) {
      case model::OpKind::kInput:
      case model::OpKind::kOutput: style = ", style=filled, fillcolor=lightblue"; break;
      case model::OpKind::kWeight:
      case model::OpKind::kConstant: style = ", style=filled, fillcolor=lightgrey"; break;
      case model::OpKind::kConcat:
      case model::OpKind::kSlice:
      case model::OpKind::kConvert: style = ", style=filled, fillcolor=orange"; break;
      default: break;
    }
    std::cout << "  n" << v << " [label=\"" << n.name << "\\n" << model::to_string(n.kind) << " "
              << model::to_string(n.shape) << " " << model::to_string(n.dtype) << "\"" << style << "];\n";
  }
  for (auto v : g.topological_order())
    for (auto u : g.operands(v)) std::cout << "  n" << u << " -> n" << v << ";\n";
  std::cout << "}\n";
}

void print_table(const model::LayerGraph& g, const std::vector<model::OpStats>& st, const model::GraphTotals& t,
                 const costmodel::DeviceLiveSet& vt) {
  std::cout << "variant  " << g.variant.key(model::AxisScope(g.layer));
  if (!g.variant.preset(model::AxisScope(g.layer)).empty()) std::cout << "  (" << g.variant.preset(model::AxisScope(g.layer)) << ")";
  std::cout << "\nlayer    " << model::to_string(g.layer.type) << ", ctx " << g.layer.context << ", cache "
            << g.layer.cache_entries << " entries, rotary dims " << g.layer.rope.rotary_dims << "\n\n";
  Table tab({"#", "op", "kind", "inputs", "shape", "dtype", "MACs", "read B", "written B", "live KiB"});
  for (auto v : g.topological_order()) {
    const auto& n = g.op(v);
    if (n.kind == model::OpKind::kWeight || n.kind == model::OpKind::kConstant) continue;
    tab.add({std::to_string(v), n.name, model::to_string(n.kind), operand_names(g, v), model::to_string(n.shape),
             model::to_string(n.dtype), fmt_int(st[v].macs), fmt_int(st[v].bytes_read), fmt_int(st[v].bytes_written),
             fmt_int(vt.live.live_bytes[v] / 1024)});
  }
  tab.print(std::cout);
  std::cout << "\ntotals   ops " << t.op_count << ", MACs " << fmt_int(t.macs) << ", weights " << fmt_int(t.weight_bytes)
            << " B, boundary in " << fmt_int(t.boundary_bytes_in) << " B, boundary out " << fmt_int(t.boundary_bytes_out)
            << " B per token\n";
  std::cout << "live     cache-sized tensors (>= " << fmt(vt.min_kib, 0) << " KiB, laid out as on " << vt.device
            << ") alive at each op; peak " << fmt(vt.live.peak_bytes / 1048576.0, 2) << " MiB";
  if (vt.live.peak_bytes > 0) std::cout << " at " << g.op(vt.live.peak_at).name;
  if (vt.knees_mib.empty()) {
    std::cout << "; " << vt.device << " models no VTCM\n";
    return;
  }
  std::cout << "; knees in " << vt.device << "'s hypotheses: ";
  for (size_t i = 0; i < vt.knees_mib.size(); ++i)
    std::cout << (i ? ", " : "") << vt.knees_mib[i] << " MiB "  // shortest form: 2, 2.5
              << (vt.live.peak_bytes > vt.knees_mib[i] * 1048576 ? "over" : "not over");
  std::cout << "\n";
}

// --params: the whole model's parameters (counted from its layer graphs) and layer structure.
void print_params(const model::ModelSpec& m, bool json) {
  const model::ParamCount c = model::count_parameters(m);
  const model::StructureSummary s = model::structure_summary(m);
  if (json) {
    JsonWriter w(std::cout);
    w.begin_object();
    w.field("model", m.name);
    w.key("parameters").begin_object();
    w.field("per_sliding_layer", c.per_sliding_layer);
    w.field("per_full_layer", c.per_full_layer);
    w.field("layers", c.layers);
    w.field("embedding", c.embedding);
    w.field("lm_head", c.lm_head);
    w.field("final_norm", c.final_norm);
    w.field("tied_embeddings", m.tied_embeddings);
    w.field("total", c.total);
    w.end_object();
    w.key("structure").begin_object();
    w.field("family", s.family);
    w.field("norm", s.norm);
    w.field("norms_per_layer", s.norms_per_layer);
    w.field("activation", s.activation);
    w.field("head_gate", s.head_gate);
    w.field("qk_norm", s.qk_norm);
    w.field("sandwich_norms", s.sandwich_norms);
    w.field("parallel_block", s.parallel_block);
    w.field("qkv_fused", s.qkv_fused);
    w.field("qkv_bias", s.qkv_bias);
    w.field("query_scale", s.query_scale);
    w.field("attn_softcap", s.attn_softcap);
    w.field("final_softcap", m.final_softcap);
    w.field("embedding_scale", m.embedding_scale);
    w.field("logit_scale", m.logit_scale);
    w.field("rotary_dims_sliding", s.rotary_dims_sliding);
    w.field("rotary_dims_full", s.rotary_dims_full);
    w.field("rope_scaling_full", s.rope_scaling_full);
    w.end_object();
    w.end_object();
    std::cout << "\n";
    return;
  }
  auto dims = [](int d) { return d < 0 ? std::string("-") : std::to_string(d); };
  std::cout << "model      " << m.name << " (" << s.family << ")\n"
            << "structure  norm " << s.norm << " x" << s.norms_per_layer << " per layer"
            << (s.sandwich_norms ? " (sandwich)" : "") << (s.qk_norm ? ", q/k norm" : "")
            << (s.parallel_block ? ", parallel attention + MLP" : "") << ", " << (s.qkv_fused ? "fused" : "separate")
            << " qkv" << (s.qkv_bias ? " with biases" : "") << ", activation " << s.activation << ", head gate "
            << (s.head_gate ? "yes" : "no") << ", rotary dims sliding " << dims(s.rotary_dims_sliding) << " / full "
            << dims(s.rotary_dims_full) << " (scaling " << s.rope_scaling_full << ")";
  if (s.attn_softcap > 0) std::cout << ", attention softcap " << s.attn_softcap;
  if (m.final_softcap > 0) std::cout << ", final softcap " << m.final_softcap;
  std::cout << "\nparameters per sliding layer " << fmt_int(c.per_sliding_layer) << ", per full layer "
            << fmt_int(c.per_full_layer) << ", layers " << fmt_int(c.layers) << ", embedding " << fmt_int(c.embedding)
            << ", LM head " << (m.tied_embeddings ? std::string("tied") : fmt_int(c.lm_head)) << ", final norm "
            << fmt_int(c.final_norm) << "\ntotal      " << fmt_int(c.total) << "\n";
}

}  // namespace

void add_graph_verb(CLI::App& app) {
  auto args = std::make_shared<GraphArgs>();
  auto* sub = app.add_subcommand("graph", "build one layer variant and print its ops, shapes, bytes and MACs");
  args->layer.add_to(*sub, model::limits::kMaxContext);
  sub->add_option("--device", args->device,
                  "device whose tiling and VTCM the live set is shown in: a name under configs/devices/ or a "
                  "device .yaml")
      ->capture_default_str();
  sub->add_flag("--dot", args->dot, "print Graphviz DOT");
  sub->add_flag("--params", args->params,
                "print the whole model's parameter count (from its layer graphs) and layer structure instead");
  sub->callback([args, sub] {
    args->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    // 1. Resolve the model, layer type and variant from the flags.
    // (--params: the whole model, whatever the layer flags say.)
    if (args->params) return print_params(model::load_model(args->layer.model), args->json);
    auto r = args->layer.resolve();
    // 2. Build the op graph.
    auto g = model::build_layer_graph(r.layer, r.variant);
    // 3. Analyses into side tables.
    auto stats = model::analyze(g);
    auto tot = model::totals(g, stats);
    // 4. Print.
    if (args->dot) return print_dot(g);
    // The VTCM live set as the device holds it, and the knees its hypotheses put on it.
    const costmodel::DeviceLiveSet vt = costmodel::device_live_set(g, costmodel::load_device_named(args->device));
    if (args->json) print_json(g, stats, tot, vt);
    else print_table(g, stats, tot, vt);
  });
}

}  // namespace layoutx::cli
