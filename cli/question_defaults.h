// The question's defaults when a flag is not given: the shipped model (model::kDefaultModel), w4a16,
// a 4096-token context. One place for select, step, whatif, next (cli/question_flags.h), the
// one-layer verbs' --ctx (cli/layer_options.h) and report's --decision-ctx.
#pragma once

namespace layoutx::cli {

inline constexpr const char* kDefaultPrecision = "w4a16";
inline constexpr int kDefaultContext = 4096;  // tokens

}  // namespace layoutx::cli
