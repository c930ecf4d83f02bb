// The flags that name one layer variant, shared by every verb that works on one
// (graph, predict, parity, emit): --model --layer --ctx --layout --set --precision.
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/question_defaults.h"
#include "model/limits.h"
#include "model/model_loader.h"
#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::cli {

struct LayerOptions {
  std::string model = model::kDefaultModel;
  std::string layer = "sliding";
  int ctx = kDefaultContext;
  std::string layout = "roll";
  std::vector<std::string> sets;
  std::string precision;  // empty: the layout's own (fp16 for a preset)

  // Registers the flags on a subcommand; --ctx is checked against [2, max_ctx] (model/limits.h).
  void add_to(CLI::App& app, int64_t max_ctx);
  // Whether the user gave the flag (e.g. "--layer"), not its default. False before add_to.
  bool given(const std::string& flag) const;

  // What the flags resolve to. Throws Error naming the flag that is wrong.
  struct Resolved {
    model::ModelSpec model;
    model::LayerSpec layer;
    model::Variant variant;
  };
  Resolved resolve() const;

 private:
  CLI::App* app_ = nullptr;  // the subcommand the flags are on, for given()
};

}  // namespace layoutx::cli
