// Converter legality as data (configs/rules/*.yaml): op forms that fail to convert at a
// precision, matched against the lowered graph's op kinds, users and broadcast structure.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/lowering.h"
#include "costmodel/predictor.h"
#include "model/graph.h"

namespace layoutx::costmodel {

struct FormMatch {
  model::OpKind kind = model::OpKind::kMul;
  std::optional<model::OpKind> feeds;  // some user (through Reshape views) has this kind
  int min_broadcast_axes = 0;
  bool all_operands_broadcast = false;
};

struct Outcome {
  Compiles result = Compiles::kYes;
  int exit_code = 0;
  std::string evidence;
};

struct FormRule {
  std::string id;
  std::string description;
  FormMatch match;
  std::map<model::Precision, Outcome> outcomes;  // a precision not here: never tried
};

struct RuleSet {
  std::string source;
  Outcome default_outcome;
  std::vector<FormRule> forms;
};

// Throws Error listing every problem (file:line:col: key: what).
RuleSet load_rules(const std::string& path);
RuleSet load_rules_text(const std::string& text, const std::string& name);

// Output axes along which some (non-Constant) operand of v is broadcast from size 1, and
// whether every such operand is broadcast along at least one axis.
struct Broadcast {
  int axes = 0;
  bool all_operands = false;
};
Broadcast broadcast_of(const model::LayerGraph& g, model::Vertex v);

// Whether the lowered graph converts at its precision: kNo if a form fails there (reasons: the
// rule, the op, the evidence), else kUnknown if a matched form was never tried there, else kYes.
Legality check_legality(const RuleSet& rules, const model::LayerGraph& g, const std::vector<LoweredOp>& ops);

}  // namespace layoutx::costmodel
