#include "cli/layer_options.h"

#include "cli/flag_checks.h"
#include "model/design_space.h"
#include "model/limits.h"
#include "support/error.h"

namespace layoutx::cli {

bool LayerOptions::given(const std::string& flag) const {
  const CLI::Option* o = app_ ? app_->get_option_no_throw(flag) : nullptr;
  return o && o->count() > 0;
}

void LayerOptions::add_to(CLI::App& app, int64_t max_ctx) {
  app_ = &app;
  app.add_option("--model", model, "model: a shipped name, a .yaml spec or a HF config.json")
      ->capture_default_str();
  app.add_option("--layer", layer, "layer type: sliding or full")->capture_default_str();
  app.add_option("--ctx", ctx, "context length in tokens")
      ->capture_default_str()
      ->check(integer_in(2, max_ctx));
  app.add_option("--layout", layout, "preset (roll, ring, score-join) or a variant key")->capture_default_str();
  app.add_option("--set", sets, "change one axis: axis=value (repeatable)");
  app.add_option("--precision", precision, "fp16, w8a16 or w4a16 (overrides the layout's)")->check(precision_name());
}

LayerOptions::Resolved LayerOptions::resolve() const {
  Resolved r;
  r.model = model::load_model(model);
  std::vector<std::string> all_sets = sets;
  if (!precision.empty()) all_sets.push_back("precision=" + precision);
  try {
    // Relative to the model: "ring" on a gelu_tanh model keeps gelu=tanh.
    r.variant = model::parse_variant(layout, all_sets, model::AxisScope(r.model));
  } catch (const Error& e) {
    throw Error(std::string("--layout/--set/--precision: ") + e.what());
  }
  r.layer = r.model.layer(model::parse_layer_type(layer, "--layer"), ctx);
  return r;
}

}  // namespace layoutx::cli
