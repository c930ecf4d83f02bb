// Converter legality as data (configs/rules/*.yaml): every record of a conversion attempt, kept
// with its source, matched against the lowered graph's op forms (op kinds, operands, users,
// broadcast structure), never against variant names. Records that disagree give `contested`,
// a form nobody tried at a precision gives `unknown`: the tool never picks one record.
#pragma once
#include <map>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/lowering.h"
#include "costmodel/predictor.h"
#include "model/graph.h"

namespace layoutx::costmodel {

struct FormMatch {
  model::OpKind kind = model::OpKind::kMul;
  std::optional<model::OpKind> feeds;         // some user (through Reshape views) has this kind
  std::optional<model::OpKind> operand_kind;  // some operand (through Reshape views) has this kind
  std::optional<model::GeluForm> gelu;        // for kind Gelu: this form only
  int min_broadcast_axes = 0;
  bool all_operands_broadcast = false;
};

// One conversion attempt as somebody reported it.
struct Record {
  Compiles result = Compiles::kYes;  // kYes (converted) or kNo (the converter failed)
  int exit_code = 0;                 // the converter's exit code when it failed, if stated
  std::string source;                // who reported it (e.g. "third export (device notes)")
  std::string evidence;              // what they reported
};
std::string describe(const Record& r);  // "fail, converter exit code 14 (source: evidence)"

// The combined outcome of a set of records: none -> unknown; all converted -> yes; all failed
// -> no; both -> contested.
Compiles combine(const std::vector<Record>& records);
// The more severe of two outcomes: no > contested > unknown > yes.
Compiles worse(Compiles a, Compiles b);

struct FormRule {
  std::string id;
  std::string description;
  FormMatch match;
  std::map<model::Precision, std::vector<Record>> records;  // a precision not here: never tried
};

// Conversion records by axis value (costmodel/axis_records.h reads and checks them).
struct AxisRecords {
  std::string source;  // the file
  // (axis, value) -> precision -> records. A value not listed, or a precision without records
  // (an `unknown` entry says nothing was tried), is unknown. An axis at its default is today's
  // form: the op-form rules cover it.
  std::map<std::pair<std::string, std::string>, std::map<model::Precision, std::vector<Record>>> records;
};

struct RuleSet {
  std::string source;
  // The exporters' forms by axis value: the file the op-form rules name under `axis_records:`
  // (relative to their own folder), or none.
  AxisRecords axis_records;
  // Per precision: the records for the ops every variant has (projections, norms, MLP, rotary),
  // i.e. the outcome of a graph that matches no form. A precision not here: unknown.
  std::map<model::Precision, std::vector<Record>> defaults;
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

// Whether the lowered graph converts at its precision: the worst outcome over the defaults and
// every matched form's records at that precision (no > contested > unknown > yes), with one
// reason per matched form (and for the defaults) whose outcome is not yes.
Legality check_legality(const RuleSet& rules, const model::LayerGraph& g, const std::vector<LoweredOp>& ops);

}  // namespace layoutx::costmodel
