// layoutx parity: runs two layer variants (or a variant and the float64 reference) over the
// same history of --steps tokens, on the same weights, and prints how far apart their output
// hidden states are: SNR (dB), max abs error, top-k agreement; each side against the float64
// reference too. --min-snr makes a shortfall the verb's negative finding (exit 1).
#include <chrono>
#include <iostream>

#include "cli/fidelity_options.h"
#include "cli/flag_checks.h"
#include "cli/table.h"
#include "model/design_space.h"
#include "model/limits.h"
#include "model/tensor_budget.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "cli/weights_flags.h"
#include "model/model_loader.h"
#include "model/numerics/fidelity.h"
#include "model/numerics/reference.h"
#include "support/error.h"
#include "support/json_writer.h"

namespace layoutx::cli {

namespace {

namespace nx = model::numerics;

struct ParityArgs {
  std::string model = model::kDefaultModel;
  std::vector<std::string> set_model;
  std::string layer = "sliding";
  int ctx = 1024;
  std::string precision;  // empty: each side's own (fp16 for a preset)
  std::string a = "reference", b = "ring";
  std::vector<std::string> set_a, set_b;
  int steps = 16;
  uint64_t seed = 1;
  std::string dtype = "float32";
  bool exact = false;
  WeightsFlags weights;  // --weights, --weight-map, --layer-index (default: seeded weights)
  int topk = 5;
  std::string quantizer = model::numerics::to_string(model::numerics::kDefaultW4Quantizer);
  int calibration_steps = model::numerics::QuantOptions{}.calibration_steps;
  double min_snr = -1;
  bool json = false;
};

// One side of the comparison: the float64 reference, or a variant.
struct Side {
  bool reference = false;
  model::Variant variant;
  model::AxisScope scope;
  std::string label() const { return reference ? "reference" : variant.key(scope); }
};

// The variant is read relative to the model: "ring" on a gelu_tanh model keeps gelu=tanh.
Side resolve_side(const std::string& name, const std::vector<std::string>& sets, const std::string& precision,
                  const std::string& flag, const model::AxisScope& scope) {
  Side s;
  s.scope = scope;
  if (name == "reference") {
    if (!sets.empty()) throw Error("--set-" + flag + ": the reference has no axes to set");
    s.reference = true;
    return s;
  }
  std::vector<std::string> all = sets;
  if (!precision.empty()) all.push_back("precision=" + precision);
  try {
    s.variant = model::parse_variant(name, all, scope);
  } catch (const Error& e) {
    throw Error("--" + flag + "/--set-" + flag + "/--precision: " + e.what());
  }
  return s;
}

struct Run {
  nx::Sequence out;
  double seconds = 0;
};

Run run_side(const Side& s, const model::LayerSpec& layer, const nx::LayerWeights& w, const nx::Sequence& in,
             nx::Arithmetic arith, bool simulate, const nx::QuantOptions& quant) {
  const auto t0 = std::chrono::steady_clock::now();
  Run r;
  r.out = s.reference ? nx::run_reference(layer, w, in)
                      : nx::run_variant(layer, s.variant, w, in, arith, simulate, quant);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string db(double v) { return std::isfinite(v) ? fmt(v, 1) + " dB" : "inf (identical)"; }

// What parity compared, for printing.
struct Compared {
  const model::ModelSpec& spec;
  const model::LayerSpec& layer;
  nx::Arithmetic arith;
  const nx::QuantOptions& quant;
  const std::string& weights_from;  // seeded, or the checkpoint and layer
  const Side &sa, &sb;
  const Run &ra, &rb;
  const nx::Fidelity &ab, &a_ref, &b_ref;  // B against A; each against the float64 reference
};

void print_json(const ParityArgs& a, const Compared& r) {
  const auto& [spec, layer, arith, quant, weights_from, sa, sb, ra, rb, ab, a_ref, b_ref] = r;
  JsonWriter j(std::cout);
  j.begin_object();
  j.field("a", sa.label()).field("b", sb.label());
  j.field("model", spec.name).field("layer", model::to_string(layer.type)).field("ctx", layer.context);
  j.field("window", layer.window).field("cache_entries", layer.cache_entries);
  j.field("steps", ab.steps).field("seed", a.seed).field("dtype", nx::to_string(arith));
  j.field("simulate_precision", !a.exact).field("weights", weights_from);
  j.field("quantizer", a.quantizer).field("calibration_steps", a.calibration_steps);
  j.field("snr_db", ab.snr_db).field("max_abs_err", ab.max_abs_err);
  j.field("delta_snr_db", ab.delta_snr_db).field("min_step_snr_db", ab.min_step_snr_db);
  j.field("k", ab.k).field("topk_agreement", ab.topk_agreement).field("top1_agreement", ab.top1_agreement);
  j.field("a_vs_reference_snr_db", a_ref.snr_db).field("a_vs_reference_max_abs_err", a_ref.max_abs_err);
  j.field("b_vs_reference_snr_db", b_ref.snr_db).field("b_vs_reference_max_abs_err", b_ref.max_abs_err);
  j.field("step_snr_db", ab.step_snr_db);
  j.field("a_seconds", ra.seconds).field("b_seconds", rb.seconds);
  j.end_object();
  std::cout << "\n";
}

void print_text(const ParityArgs& a, const Compared& r) {
  const auto& [spec, layer, arith, quant, weights_from, sa, sb, ra, rb, ab, a_ref, b_ref] = r;
  std::cout << "model    " << spec.name << ", " << model::to_string(layer.type) << " layer, ctx " << layer.context
            << ", cache " << layer.cache_entries << " entries\n"
            << "history  " << ab.steps << " steps, weights " << weights_from << ", " << nx::to_string(arith)
            << (a.exact ? ", precision not simulated" : ", precision simulated") << "\n"
            << "quant    " << explorer::quant_description(quant) << "\n"
            << "A        " << sa.label() << "  (" << fmt(ra.seconds / ab.steps * 1e3, 2) << " ms/step)\n"
            << "B        " << sb.label() << "  (" << fmt(rb.seconds / ab.steps * 1e3, 2) << " ms/step)\n\n";
  Table t({"pair", "SNR", "update SNR", "worst step SNR", "max abs err", "top-1 agree", "top-" + std::to_string(a.topk) + " agree"});
  auto row = [&](const std::string& name, const nx::Fidelity& f) {
    t.add({name, db(f.snr_db), db(f.delta_snr_db), db(f.min_step_snr_db), fmt(f.max_abs_err, 9),
           fmt(100 * f.top1_agreement, 1) + "%", fmt(100 * f.topk_agreement, 1) + "%"});
  };
  row("B vs A", ab);
  if (!sa.reference && !sb.reference) {
    row("A vs reference", a_ref);
    row("B vs reference", b_ref);
  }
  t.print(std::cout);
}

}  // namespace

void add_parity_verb(CLI::App& app) {
  auto args = std::make_shared<ParityArgs>();
  auto* sub = app.add_subcommand("parity", "compare two layer variants (or one and the float64 reference) numerically");
  sub->add_option("--model", args->model, "model: a shipped name, a .yaml spec or a HF config.json")->capture_default_str();
  sub->add_option("--set-model", args->set_model, "override one model field: key=value (repeatable)");
  sub->add_option("--layer", args->layer, "layer type: sliding or full")->capture_default_str();
  sub->add_option("--ctx", args->ctx, "context length in tokens (a full layer's cache is ctx-1)")
      ->capture_default_str()
      ->check(integer_in(2, model::limits::kMaxTensorContext));
  sub->add_option("--precision", args->precision, "fp16, w8a16 or w4a16 for both sides (overrides theirs)")->check(precision_name());
  sub->add_option("--a", args->a, "side A: preset, variant key, or 'reference'")->capture_default_str();
  sub->add_option("--b", args->b, "side B: preset, variant key, or 'reference'")->capture_default_str();
  sub->add_option("--set-a", args->set_a, "change one axis of A: axis=value (repeatable)");
  sub->add_option("--set-b", args->set_b, "change one axis of B: axis=value (repeatable)");
  sub->add_option("--steps", args->steps, "tokens in the history")
      ->capture_default_str()
      ->check(integer_in(1, model::limits::kMaxParitySteps));
  add_seed_option(*sub, args->seed, "the weights and the token inputs");
  sub->add_option("--dtype", args->dtype, "arithmetic of the executor: float32 or float64")->capture_default_str();
  sub->add_flag("--exact", args->exact, "do not simulate the precision (f16 rounding, quantization): graph function only");
  args->weights.add_to(*sub);
  sub->add_option("--topk", args->topk, "k of the top-k agreement")
      ->capture_default_str()
      ->check(integer_in(1, model::limits::kMaxHidden));
  add_quantizer_options(*sub, args->quantizer, args->calibration_steps);
  sub->add_option("--min-snr", args->min_snr, "exit 1 if the A-B SNR (dB) is below this")
      ->check(number_in(0.0, 1000.0));
  sub->callback([args, sub] {
    args->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    const ParityArgs& a = *args;
    a.weights.check();  // flags that need another, before any work
    // 1. The model (with overrides) and the layer type at the context.
    model::ModelSpec spec = model::load_model(a.model);
    for (const auto& kv : a.set_model) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) throw Error("--set-model: expected key=value, got '" + kv + "'");
      model::set_model_field(spec, kv.substr(0, eq), kv.substr(eq + 1));
    }
    const model::LayerType type = model::parse_layer_type(a.layer, "--layer");
    const model::LayerSpec layer = spec.layer(type, a.ctx);
    model::check_tensor_budget(layer, "parity");
    // 2. The two sides and the arithmetic.
    const Side sa = resolve_side(a.a, a.set_a, a.precision, "a", model::AxisScope(spec));
    const Side sb = resolve_side(a.b, a.set_b, a.precision, "b", model::AxisScope(spec));
    const nx::Arithmetic arith = nx::parse_arithmetic(a.dtype);
    nx::QuantOptions quant = quant_options(a.quantizer, a.calibration_steps);
    quant.calibration_seed = a.seed;
    // 3. Weights: seeded, or one layer of a checkpoint mapped by the model's weight map.
    nx::LayerWeights w;
    std::string weights_from = "seeded (seed " + std::to_string(a.seed) + ")";
    if (!a.weights.weights.empty()) {
      const WeightsFlags::Source from = a.weights.resolve(spec, type);
      w = WeightsFlags::load(from, layer);
      weights_from = from.checkpoint + " layer " + std::to_string(from.layer_index);
    } else {
      w = nx::seeded_weights(layer, a.seed);
    }
    // 4. The token history.
    const nx::Sequence in = nx::token_inputs(layer.hidden, a.steps, a.seed);
    // 5. Run A, B and the float64 reference over it.
    const Run ra = run_side(sa, layer, w, in, arith, !a.exact, quant);
    const Run rb = run_side(sb, layer, w, in, arith, !a.exact, quant);
    const Run ref = sa.reference ? ra : sb.reference ? rb : run_side(Side{true, {}}, layer, w, in, arith, false, quant);
    // 6. Compare: B against A, and each against the reference.
    const nx::Fidelity ab = nx::compare(ra.out, rb.out, in, a.topk);
    const nx::Fidelity a_ref = nx::compare(ref.out, ra.out, in, a.topk);
    const nx::Fidelity b_ref = nx::compare(ref.out, rb.out, in, a.topk);
    if (a.min_snr >= 0 && ab.snr_db < a.min_snr) {
      // The verb's negative finding: exit 1, and say why where a CI log shows it.
      verb_exit_status() = 1;
      std::cerr << "layoutx parity: B vs A SNR " << db(ab.snr_db) << " is below --min-snr " << fmt(a.min_snr, 1)
                << " dB (" << sb.label() << " vs " << sa.label() << "); exit 1\n";
    }
    // 7. Print.
    const Compared r{spec, layer, arith, quant, weights_from, sa, sb, ra, rb, ab, a_ref, b_ref};
    if (a.json) print_json(a, r);
    else print_text(a, r);
  });
}

}  // namespace layoutx::cli
