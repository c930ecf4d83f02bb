#include "emit/onnx_writer.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <cmath>
#include <fstream>
#include <algorithm>
#include <map>

#include "model/design_space.h"
#include "support/atomic_file.h"
#include "support/error.h"

namespace layoutx::emit {

namespace {

using model::OpKind;
using model::Vertex;

class Writer {
 public:
  Writer(const model::LayerGraph& g, const WeightSource& w, int opset,
         const std::map<std::string, std::pair<double, double>>* cache_ranges)
      : g_(g), w_(w), opset_(opset), cache_ranges_(cache_ranges) {
    graph_ = model_.mutable_graph();
  }

  onnx::ModelProto take() { return std::move(model_); }

  void run(const std::string& graph_name) {
    model_.set_ir_version(onnx::IR_VERSION);
    model_.set_producer_name("layoutx");
    model_.set_producer_version("1");
    model_.set_doc_string("one decode step of one layer: " + std::string(model::to_string(g_.layer.type)) +
                          ", ctx " + std::to_string(g_.layer.context) + ", variant " + g_.variant.key(model::AxisScope(g_.layer)));
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset_);
    auto meta = [&](const std::string& k, const std::string& v) {
      auto* p = model_.add_metadata_props();
      p->set_key(k);
      p->set_value(v);
    };
    meta("layoutx.variant_key", g_.variant.key(model::AxisScope(g_.layer)));
    meta("layoutx.layer", model::to_string(g_.layer.type));
    meta("layoutx.ctx", std::to_string(g_.layer.context));
    meta("layoutx.cache_entries", std::to_string(g_.layer.cache_entries));
    graph_->set_name(graph_name);
    for (Vertex v : g_.topological_order()) emit(v);
  }

 private:
  // Tensor name of a vertex's output.
  std::string name(Vertex v) const {
    const auto& n = g_.op(v);
    if (n.kind == OpKind::kInput || n.kind == OpKind::kOutput || n.kind == OpKind::kWeight)
      return model::role_name(n.role);
    return n.name;
  }
  std::string in(Vertex v, int i) const { return name(g_.operands(v).at(static_cast<size_t>(i))); }

  onnx::NodeProto* node(const std::string& op_type, const std::string& node_name, std::vector<std::string> inputs,
                        const std::string& output) {
    auto* n = graph_->add_node();
    n->set_op_type(op_type);
    n->set_name(node_name);
    for (auto& i : inputs) n->add_input(i);
    n->add_output(output);
    return n;
  }
  static void attr_int(onnx::NodeProto* n, const std::string& k, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_ints(onnx::NodeProto* n, const std::string& k, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  void float_init(const std::string& nm, const model::Shape& shape, const std::vector<float>& data) {
    auto* t = graph_->add_initializer();
    t->set_name(nm);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : shape) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float)));
  }
  // A scalar float constant as a [1] initializer (broadcasts like the layoutx Constant).
  std::string scalar(const std::string& nm, double value) {
    float_init(nm, {1}, {static_cast<float>(value)});
    return nm;
  }
  std::string ints(const std::string& nm, const std::vector<int64_t>& v) {
    auto* t = graph_->add_initializer();
    t->set_name(nm);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (auto x : v) t->add_int64_data(x);
    return nm;
  }
  void value_info(onnx::ValueInfoProto* vi, const std::string& nm, const model::Shape& shape) {
    vi->set_name(nm);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    auto* sh = tt->mutable_shape();
    for (auto d : shape) sh->add_dim()->set_dim_value(d);
  }
  int64_t axis(Vertex v) const { return g_.op(v).axis; }

  void emit(Vertex v) {
    const auto& n = g_.op(v);
    const std::string out = name(v);
    switch (n.kind) {
      case OpKind::kInput:
        value_info(graph_->add_input(), out, n.shape);
        return;
      case OpKind::kWeight: {
        if (!n.conv_layout || n.shape.size() != 4) {
          float_init(out, n.shape, w_.tensor(n.role, n.shape));
          return;
        }
        // projection=conv1x1: the role's [in, out] tensor transposed to Conv's [out, in, 1, 1].
        const int64_t o = n.shape[0], i = n.shape[1];
        const std::vector<float> w = w_.tensor(n.role, {i, o});
        std::vector<float> t(w.size());
        for (int64_t r = 0; r < i; ++r)
          for (int64_t c = 0; c < o; ++c) t[static_cast<size_t>(c * i + r)] = w[static_cast<size_t>(r * o + c)];
        float_init(out, n.shape, t);
        return;
      }
      case OpKind::kConstant:
        scalar(out, n.scalar);
        return;
      case OpKind::kOutput:
        node("Identity", n.name, {in(v, 0)}, out);
        value_info(graph_->add_output(), out, n.shape);
        return;
      case OpKind::kConvert: {
        const std::pair<double, double>* range = nullptr;
        if (n.dtype == model::DType::kU8 && cache_ranges_) {
          auto it = cache_ranges_->find(n.name);
          if (it != cache_ranges_->end()) range = &it->second;
        }
        if (range) {
          // The u8 cache's tied symmetric encoding: uint8 codes, zero point 128.
          const double a = std::max(std::abs(range->first), std::abs(range->second));
          const std::string p = n.name + "/";
          scalar(p + "scale", a > 0 ? a / 127.0 : 1.0);
          auto* zp = graph_->add_initializer();
          zp->set_name(p + "zero_point");
          zp->set_data_type(onnx::TensorProto::UINT8);
          zp->set_raw_data(std::string(1, static_cast<char>(128)));
          node("QuantizeLinear", p + "quantize", {in(v, 0), p + "scale", p + "zero_point"}, p + "codes");
          node("DequantizeLinear", n.name, {p + "codes", p + "scale", p + "zero_point"}, out);
          return;
        }
        attr_int(node("Cast", n.name, {in(v, 0)}, out), "to", onnx::TensorProto::FLOAT);
        return;
      }
      case OpKind::kRmsNorm: {
        const std::string x = in(v, 0), p = n.name + "/";
        node("Mul", p + "square", {x, x}, p + "square");
        auto* mean = node("ReduceMean", p + "mean", {p + "square"}, p + "mean");
        attr_ints(mean, "axes", {axis(v)});  // attribute until opset 18
        attr_int(mean, "keepdims", 1);
        node("Add", p + "add_eps", {p + "mean", scalar(p + "eps", n.eps)}, p + "add_eps");
        node("Sqrt", p + "rms", {p + "add_eps"}, p + "rms");
        node("Div", p + "normalize", {x, p + "rms"}, p + "normalize");
        std::string w = in(v, 1);
        if (n.norm_offset != 0.0) {  // Gemma's (offset + w)
          node("Add", p + "weight_offset", {w, scalar(p + "offset", n.norm_offset)}, p + "weight_offset");
          w = p + "weight_offset";
        }
        node("Mul", n.name, {p + "normalize", w}, out);
        return;
      }
      case OpKind::kLayerNorm: {
        // (x - mean) / sqrt(mean((x - mean)^2) + eps) * w, spelt in opset-13 ops.
        const std::string x = in(v, 0), p = n.name + "/";
        auto* mean = node("ReduceMean", p + "mean", {x}, p + "mean");
        attr_ints(mean, "axes", {axis(v)});
        attr_int(mean, "keepdims", 1);
        node("Sub", p + "center", {x, p + "mean"}, p + "center");
        node("Mul", p + "square", {p + "center", p + "center"}, p + "square");
        auto* var = node("ReduceMean", p + "var", {p + "square"}, p + "var");
        attr_ints(var, "axes", {axis(v)});
        attr_int(var, "keepdims", 1);
        node("Add", p + "add_eps", {p + "var", scalar(p + "eps", n.eps)}, p + "add_eps");
        node("Sqrt", p + "std", {p + "add_eps"}, p + "std");
        node("Div", p + "normalize", {p + "center", p + "std"}, p + "normalize");
        node("Mul", n.name, {p + "normalize", in(v, 1)}, out);
        return;
      }
      case OpKind::kTanh: node("Tanh", n.name, {in(v, 0)}, out); return;
      case OpKind::kMatMul: {
        if (!n.transpose_b) {
          node("MatMul", n.name, {in(v, 0), in(v, 1)}, out);
          return;
        }
        // b read transposed: a Transpose of its last two axes first.
        const auto rank = static_cast<int64_t>(g_.op(g_.operands(v).at(1)).shape.size());
        std::vector<int64_t> perm;
        for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
        std::swap(perm[static_cast<size_t>(rank - 1)], perm[static_cast<size_t>(rank - 2)]);
        const std::string t = n.name + "/transpose_b";
        attr_ints(node("Transpose", t, {in(v, 1)}, t), "perm", perm);
        node("MatMul", n.name, {in(v, 0), t}, out);
        return;
      }
      case OpKind::kAdd: node("Add", n.name, {in(v, 0), in(v, 1)}, out); return;
      case OpKind::kSub: node("Sub", n.name, {in(v, 0), in(v, 1)}, out); return;
      case OpKind::kMul: node("Mul", n.name, {in(v, 0), in(v, 1)}, out); return;
      case OpKind::kDiv: node("Div", n.name, {in(v, 0), in(v, 1)}, out); return;
      case OpKind::kNeg: node("Neg", n.name, {in(v, 0)}, out); return;
      case OpKind::kSigmoid: node("Sigmoid", n.name, {in(v, 0)}, out); return;
      case OpKind::kExp: node("Exp", n.name, {in(v, 0)}, out); return;
      case OpKind::kGelu: {
        const std::string x = in(v, 0), p = n.name + "/";
        std::string inner;
        switch (n.gelu) {
          case model::GeluForm::kErf:
            // 0.5 * x * (1 + erf(x / sqrt 2))
            node("Mul", p + "scale", {x, scalar(p + "inv_sqrt2", 1.0 / std::sqrt(2.0))}, p + "scale");
            node("Erf", p + "erf", {p + "scale"}, p + "erf");
            inner = p + "erf";
            break;
          case model::GeluForm::kTanh:
            // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
            node("Mul", p + "x2", {x, x}, p + "x2");
            node("Mul", p + "x3", {p + "x2", x}, p + "x3");
            node("Mul", p + "cubic", {p + "x3", scalar(p + "c", 0.044715)}, p + "cubic");
            node("Add", p + "poly", {x, p + "cubic"}, p + "poly");
            node("Mul", p + "scale", {p + "poly", scalar(p + "sqrt_2_over_pi", std::sqrt(2.0 / M_PI))}, p + "scale");
            node("Tanh", p + "tanh", {p + "scale"}, p + "tanh");
            inner = p + "tanh";
            break;
        }
        node("Add", p + "one_plus", {inner, scalar(p + "one", 1.0)}, p + "one_plus");
        node("Mul", p + "times_x", {x, p + "one_plus"}, p + "times_x");
        node("Mul", n.name, {p + "times_x", scalar(p + "half", 0.5)}, out);
        return;
      }
      case OpKind::kSoftmax:
        if (g_.operands(v).size() == 2) {
          // softmax=masked: ONNX has no MaskedSoftmax; the add it folds in, then the Softmax.
          const std::string sum = n.name + "/mask_add";
          node("Add", sum, {in(v, 0), in(v, 1)}, sum);
          attr_int(node("Softmax", n.name, {sum}, out), "axis", axis(v));
          return;
        }
        attr_int(node("Softmax", n.name, {in(v, 0)}, out), "axis", axis(v));
        return;
      case OpKind::kReduceMax: {
        auto* r = node("ReduceMax", n.name, {in(v, 0)}, out);
        attr_ints(r, "axes", {axis(v)});  // attribute until opset 18
        attr_int(r, "keepdims", 1);
        return;
      }
      case OpKind::kReduceSum: {
        auto* r = node("ReduceSum", n.name, {in(v, 0), ints(n.name + "/axes", {axis(v)})}, out);  // input since 13
        attr_int(r, "keepdims", 1);
        return;
      }
      case OpKind::kConcat: {
        std::vector<std::string> xs;
        for (size_t i = 0; i < g_.operands(v).size(); ++i) xs.push_back(in(v, static_cast<int>(i)));
        attr_int(node("Concat", n.name, xs, out), "axis", axis(v));
        return;
      }
      case OpKind::kSlice:
        node("Slice", n.name,
             {in(v, 0), ints(n.name + "/starts", {n.start}), ints(n.name + "/ends", {n.end}),
              ints(n.name + "/axes", {axis(v)})},
             out);
        return;
      case OpKind::kConv: {
        auto* c = node("Conv", n.name, {in(v, 0), in(v, 1)}, out);
        attr_ints(c, "kernel_shape", {1, 1});
        return;
      }
      case OpKind::kReshape:
        node("Reshape", n.name, {in(v, 0), ints(n.name + "/shape", {n.shape.begin(), n.shape.end()})}, out);
        return;
    }
    throw Error("onnx writer: op '" + n.name + "' has an unknown kind");
  }

  const model::LayerGraph& g_;
  const WeightSource& w_;
  int opset_;
  const std::map<std::string, std::pair<double, double>>* cache_ranges_;
  onnx::ModelProto model_;
  onnx::GraphProto* graph_ = nullptr;
};

std::string default_graph_name(const model::LayerGraph& g) {
  return "layoutx_" + std::string(model::to_string(g.layer.type)) + "_" + model::design_space().file_name(g.variant) +
         "_" + model::to_string(g.variant.precision());
}

}  // namespace

int max_supported_opset() {
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
}

onnx::ModelProto to_onnx(const model::LayerGraph& g, const WeightSource& weights, const OnnxOptions& opt) {
  const int max = max_supported_opset();
  const int opset = opt.opset == 0 ? max : opt.opset;
  // ReduceSum takes axes as an input from 13; ReduceMean/ReduceMax move it there only at 18,
  // which this writer does not spell (and ONNX 1.12 does not know).
  if (opset < 13 || opset > std::min(max, 17))
    throw Error("onnx writer: opset " + std::to_string(opset) + " is outside the supported 13.." +
                std::to_string(std::min(max, 17)));
  Writer w(g, weights, opset, opt.cache_ranges);
  w.run(opt.graph_name.empty() ? default_graph_name(g) : opt.graph_name);
  return w.take();
}

void check_onnx(const onnx::ModelProto& m, const model::LayerGraph& g) {
  check_joined_onnx(m, {&g}, [](size_t, const std::string& name) { return name; });
}

void check_joined_onnx(const onnx::ModelProto& m, const std::vector<const model::LayerGraph*>& graphs,
                       const std::function<std::string(size_t, const std::string&)>& name_of) {
  try {
    onnx::checker::check_model(m);
  } catch (const std::exception& e) {
    throw Error(std::string("onnx checker: ") + e.what());
  }
  onnx::ModelProto inferred = m;
  try {
    onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*strict=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    throw Error(std::string("onnx shape inference: ") + e.what());
  }
  // Every tensor layoutx knows a shape for must have that shape after inference.
  std::map<std::string, model::Shape> inferred_shapes;
  auto collect = [&](const onnx::ValueInfoProto& vi) {
    model::Shape s;
    for (const auto& d : vi.type().tensor_type().shape().dim()) s.push_back(d.has_dim_value() ? d.dim_value() : -1);
    inferred_shapes[vi.name()] = s;
  };
  for (const auto& vi : inferred.graph().value_info()) collect(vi);
  for (const auto& vi : inferred.graph().output()) collect(vi);
  ErrorList errors;
  for (size_t i = 0; i < graphs.size(); ++i) {
    const model::LayerGraph& g = *graphs[i];
    for (Vertex v : g.topological_order()) {
      const auto& n = g.op(v);
      if (n.kind == OpKind::kInput || n.kind == OpKind::kWeight || n.kind == OpKind::kConstant) continue;
      const std::string nm = name_of(i, n.kind == OpKind::kOutput ? model::role_name(n.role) : n.name);
      auto it = inferred_shapes.find(nm);
      if (it == inferred_shapes.end()) {
        errors.add("onnx shape inference: no shape inferred for '" + nm + "'");
      } else if (it->second != n.shape) {
        errors.add("onnx shape inference: '" + nm + "' is " + model::to_string(it->second) + ", layoutx says " +
                   model::to_string(n.shape));
      }
    }
  }
  errors.throw_if_any();
}

void write_onnx(const onnx::ModelProto& m, const std::string& path) {
  std::string bytes;
  if (!m.SerializeToString(&bytes)) throw Error(path + ": cannot serialize the ONNX model");
  write_file_atomically(path, bytes);
}

onnx::ModelProto read_onnx(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  onnx::ModelProto m;
  if (!f || !m.ParseFromIstream(&f)) throw Error(path + ": cannot read an ONNX model");
  return m;
}

}  // namespace layoutx::emit
