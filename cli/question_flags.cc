#include "cli/question_flags.h"

#include "cli/choice_output.h"
#include "cli/flag_checks.h"
#include "model/limits.h"

namespace layoutx::cli {

namespace {
const char* const kModelHelp = "a shipped name, a .yaml spec or a HF config.json";
CLI::Validator context_range() { return integer_in(2, model::limits::kMaxContext); }
}  // namespace

void QuestionFlags::add_to(CLI::App& verb, const Shape& shape) {
  prefix_ = shape.prefix;
  contexts_ = shape.contexts;
  const bool base = !prefix_.empty();  // whatif's current choice
  verb.add_option(flag("model"), model, std::string(base ? "the current model: " : "model: ") + kModelHelp)
      ->capture_default_str();
  predictor.add_to(verb);
  verb.add_option(flag("precision"), precision, base ? "the current precision: fp16, w8a16 or w4a16" : "fp16, w8a16 or w4a16")
      ->capture_default_str()
      ->check(precision_name());
  if (shape.head_precision)
    verb.add_option(flag("head-precision"), head_precision, "the LM head's precision in the whole step (default: --precision)")
        ->check(precision_name());
  CLI::Option* c = shape.contexts ? verb.add_option(flag("ctx"), ctxs, "context length(s) in tokens (repeatable)")
                                  : verb.add_option(flag("ctx"), ctx, base ? "the current context length in tokens"
                                                                           : "context length in tokens");
  c->capture_default_str()->check(context_range());
}

model::Precision QuestionFlags::head(model::Precision layers) const { return head_precision_or(head_precision, layers); }

std::vector<int> QuestionFlags::contexts() const { return contexts_ ? ctxs : std::vector<int>{ctx}; }

void QuestionFlags::check_contexts(const model::ModelSpec& m) const {
  for (int c : contexts()) m.check_context(c, flag("ctx"));
}

void QuestionChange::add_to(CLI::App& verb) {
  verb.add_option("--model", model, std::string("question: another model (") + kModelHelp + ")");
  verb.add_option("--precision", precision, "question: another precision")->check(precision_name());
  verb.add_option("--ctx", ctx, "question: another context")->check(context_range());
}

}  // namespace layoutx::cli
