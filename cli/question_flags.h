// The question select, step, whatif and next answer, as flags: which model, on which device and
// calibration (cli/predictor_options.h), at which precision and context(s). One definition of each
// flag (name, help, default, check) and of the question's defaults: the shipped model, w4a16,
// 4096 tokens. whatif registers the same flags as its current choice (--base-model, --base-precision,
// --base-ctx) and asks its question with QuestionChange.
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/predictor_options.h"
#include "cli/question_defaults.h"
#include "model/model_loader.h"
#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::cli {

struct QuestionFlags {
  std::string model = model::kDefaultModel;  // --model
  PredictorOptions predictor;                // --device, --calibration, --db
  std::string precision = kDefaultPrecision;  // --precision
  std::string head_precision;                 // --head-precision; "" = --precision
  int ctx = kDefaultContext;                  // --ctx, one context (Shape::contexts false)
  std::vector<int> ctxs{kDefaultContext};     // --ctx, repeatable (Shape::contexts true)

  struct Shape {
    bool contexts = false;        // --ctx repeatable (select, next) or one (step, whatif)
    bool head_precision = false;  // --head-precision (select, step)
    std::string prefix;           // "base-": whatif's current choice (--base-model, ...)
  };
  // Registers, in this order: --model, the predictor's flags, --precision, [--head-precision], --ctx.
  void add_to(CLI::App& verb, const Shape& shape);

  // The flag's name as registered ("--ctx", or "--base-ctx" with the prefix), for messages.
  std::string flag(const std::string& name) const { return "--" + prefix_ + name; }
  model::ModelSpec load_model() const { return model::load_model(model); }
  model::Precision layers_precision() const { return model::parse_precision(precision); }
  // The LM head's precision in the whole step: --head-precision, else `layers`.
  model::Precision head(model::Precision layers) const;
  // The context(s) asked: --ctx's values.
  std::vector<int> contexts() const;
  // Every context asked is one `m` can take, else Error naming --ctx (before any work).
  void check_contexts(const model::ModelSpec& m) const;

 private:
  std::string prefix_;
  bool contexts_ = false;
};

// whatif's question: another model, precision or context than the current choice's ("" / 0: the
// current one's), with the same checks as QuestionFlags.
struct QuestionChange {
  std::string model, precision;
  int ctx = 0;
  void add_to(CLI::App& verb);
};

}  // namespace layoutx::cli
