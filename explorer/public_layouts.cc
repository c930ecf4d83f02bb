#include "explorer/public_layouts.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "explorer/member_predictor.h"
#include "model/design_space.h"
#include "model/model_loader.h"
#include "support/error.h"
#include "support/median.h"

namespace layoutx::explorer {

using costmodel::PublicIncludes;
using costmodel::PublicKind;
using costmodel::PublicRecord;
using costmodel::PublicUse;

model::ModelSpec public_model_spec(const costmodel::PublicModel& p, std::vector<std::string>& approximations,
                                   std::optional<int> ctx) {
  // A sliding-window model is built when its family is one layoutx imports and the pattern the file
  // writes is that family's own (Gemma 2: alternating, layer 0 sliding); other patterns are not read.
  const bool gemma2 = p.hf_repo.rfind("google/gemma-2-", 0) == 0;
  if (p.window && !(gemma2 && p.sliding_window.find("alternating; layer 0 sliding") != std::string::npos))
    throw Error(p.where + ": models." + p.key + ": a sliding-window model (" + p.sliding_window +
                "): its layer pattern is not read from the public file yet");
  // The HF family whose structure the fields name; the rest are built as Llama's.
  const char* family = gemma2 ? "gemma2" : p.qk_norm ? "qwen3" : p.qkv_bias ? "qwen2" : "llama";
  if (std::string(family) == "llama" && p.hf_repo.rfind("meta-llama/", 0) != 0)
    approximations.push_back(p.key + " built with Llama's layer structure (its own is not in the public file)");
  // The activation's name is the field's first word ("gelu (act_fn in the ExecuTorch config)").
  const std::string named = p.activation.substr(0, p.activation.find(' '));
  const std::string act = named == "gelu" || named == "gelu_approx" ? "gelu_pytorch_tanh" : named;
  // A window no shorter than the context holds the whole context: every layer is a full one then.
  std::string sliding;
  if (p.window && ctx && *ctx <= *p.window) {
    sliding = ", \"layer_types\": [";
    for (int i = 0; i < p.layers; ++i) sliding += std::string(i ? ", " : "") + "\"full_attention\"";
    sliding += "]";
    approximations.push_back(p.key + ": its window (" + std::to_string(*p.window) + ") holds the whole context (" +
                             std::to_string(*ctx) + "): every layer priced as full attention");
  } else if (p.window) {
    sliding = ", \"sliding_window\": " + std::to_string(*p.window);
  }
  const bool tied = p.tied_embeddings.value.value_or(false);
  if (!p.tied_embeddings.known()) approximations.push_back(p.key + ": tied embeddings " + p.tied_embeddings.word + ", untied priced");
  const std::string config = std::string("{\"model_type\": \"") + family + "\", \"hidden_size\": " + std::to_string(p.hidden) +
                             ", \"intermediate_size\": " + std::to_string(p.intermediate) +
                             ", \"num_hidden_layers\": " + std::to_string(p.layers) +
                             ", \"num_attention_heads\": " + std::to_string(p.heads) +
                             ", \"num_key_value_heads\": " + std::to_string(p.kv_heads) +
                             ", \"head_dim\": " + std::to_string(p.head_dim) + ", \"vocab_size\": " + std::to_string(p.vocab) +
                             sliding +
                             ", \"rms_norm_eps\": 1e-6, \"hidden_act\": \"" + act + "\", \"rope_theta\": 10000.0" +
                             ", \"tie_word_embeddings\": " + (tied ? "true" : "false") + "}";
  model::ModelSpec m = model::import_hf_config_text(config, p.where + " (models." + p.key + ")");
  m.name = p.key;
  return m;
}

namespace {

// The exporters' partition: ExecuTorch's static llama splits the decoder evenly by layers with the
// embedding and the LM head inside the model's graphs; AI Hub's and Genie's parts keep the
// embedding apart and the head in the last.
bool embedding_in_graph(const std::string& exporter) { return exporter.rfind("executorch", 0) == 0; }

// The exporters that write every Linear as a 1x1 Conv: ExecuTorch's static llama
// (../shared/docs/htp-facts.md, "How Qualcomm's exporters lay out a decode step") and AI Hub's
// (quic/ai-hub-models qai_hub_models/models/_shared/llama3/model_adaptations.py, SHALlamaAttention:
// q/k/v/o as nn.Conv2d(.., 1), since 2024). The others' form is not read: MatMul, said.
bool linear_as_conv(const std::string& exporter) {
  return exporter == "executorch static llama" || exporter.rfind("ai hub", 0) == 0;
}

const char* precision_of_bits(int bits) { return bits <= 4 ? "w4a16" : bits <= 8 ? "w8a16" : "fp16"; }

}  // namespace

std::optional<int> record_part(const std::string& this_record) {
  const auto at = this_record.find("part ");
  int n = 0;
  if (at == std::string::npos || std::sscanf(this_record.c_str() + at, "part %d", &n) != 1 || n < 1) return std::nullopt;
  return n;
}

std::optional<std::pair<int, int>> record_layers(const std::string& this_record) {
  const auto at = this_record.find("layers ");
  int first = 0, last = 0;
  if (at == std::string::npos || std::sscanf(this_record.c_str() + at, "layers %d-%d", &first, &last) != 2 ||
      first < 0 || last < first)
    return std::nullopt;
  return std::make_pair(first, last);
}

std::optional<PublicQuestion> public_question(const PublicRecord& r, const costmodel::PublicTimings& t,
                                              const std::string& chip, std::string& why_not, bool per_graph) {
  const auto& l = r.layout;
  auto no = [&](const std::string& why) -> std::optional<PublicQuestion> {
    why_not = why;
    return std::nullopt;
  };
  // Every reason reads "<category>: <detail>"; `public` counts the records by category.
  if (per_graph) {
    // A per-graph timing for ratios within its source: any chip (the factor cancels), shape-only too.
    if (r.kind != PublicKind::kGraphTime) return no(std::string("not a per-graph figure: ") + costmodel::to_string(r.kind));
    if (r.use != PublicUse::kCalibration && r.use != PublicUse::kShapeOnly)
      return no(std::string("not for calibration: use ") + costmodel::to_string(r.use));
    if (!r.layout.ar_this_graph.known() || *r.layout.ar_this_graph.value != 1)
      return no("not a decode graph: AR " + (r.layout.ar_this_graph.known() ? std::to_string(*r.layout.ar_this_graph.value)
                                                                             : r.layout.ar_this_graph.word));
    if (!record_part(r.layout.this_record)) return no("not stated: which part (this_record '" + r.layout.this_record + "')");
  } else {
    if (r.use != PublicUse::kCalibration && r.use != PublicUse::kInequality)
      return no(std::string("not for calibration: use ") + costmodel::to_string(r.use));
    if (r.kind != PublicKind::kDecodeRate && r.kind != PublicKind::kDecodeFloor)
      return no(std::string("not a whole-model figure: ") + costmodel::to_string(r.kind) + " (whole-model figures only so far)");
    if (r.chip != chip && !chip_factor_prior(t, chip, r.chip))
      return no("another chip: " + r.chip + " has no DRAM peak for its factor's prior");
  }
  auto model = t.models.find(r.model);
  if (model == t.models.end()) return no("model " + r.model + " not in the file");
  if (!l.context_length.known()) return no("not stated: context length " + l.context_length.word);
  if (!l.weight_bits.known()) return no("not stated: weight width " + l.weight_bits.word);
  if (l.ar_decode.known() && *l.ar_decode.value != 1)
    return no("not a layout layoutx builds: decode of " + std::to_string(*l.ar_decode.value) + " tokens a call");
  if (l.kv_io == "in_graph") return no("not a layout layoutx builds: the cache inside the graph (kv.io in_graph)");
  PublicQuestion q;
  try {
    q.model = public_model_spec(model->second, q.approximations, l.context_length.value);
  } catch (const Error& e) {
    return no(std::string("model not built: ") + e.what());
  }
  q.ctx = *l.context_length.value;
  try {
    q.model.check_context(q.ctx, "context_length");
  } catch (const Error& e) {
    return no(std::string("model not built: ") + e.what());
  }
  auto& a = q.approximations;
  // The layer layout, as axis settings on ring (new entry returned, keys joined).
  std::vector<std::string> sets = {std::string("precision=") + precision_of_bits(*l.weight_bits.value)};
  if (l.activation_bits.known() && *l.activation_bits.value != 16)
    a.push_back(std::to_string(*l.activation_bits.value) + "-bit activations priced as 16-bit");
  if (l.kv_dtype == "u8" || l.kv_dtype == "u16") sets.push_back("kv_dtype=" + l.kv_dtype);
  else a.push_back("cache dtype " + l.kv_dtype + ": f16 priced");
  if (l.k_transposed.known() && !*l.k_transposed.value) sets.push_back("k_layout=rows");
  if (l.granularity == "block") {
    const int b = l.block_size.value.value_or(0);
    if (b == 16 || b == 32 || b == 64) sets.push_back("weight_quant=block" + std::to_string(b));
    else a.push_back("block size " + (l.block_size.known() ? std::to_string(b) : l.block_size.word) + ": per-channel priced");
  } else if (l.granularity != "per_channel" && *l.weight_bits.value <= 4) {
    a.push_back("weight granularity " + l.granularity + ": per-channel priced");
  }
  if (l.attention_form == "sha" || l.kv_io == "per_head" || l.kv_io == "per_kv_head") sets.push_back("heads=per_head");
  if (l.kv_io == "per_head" || l.kv_io == "per_kv_head")
    a.push_back("K/V passed " + l.kv_io + ": priced as one tensor a layer");
  if (l.masked_softmax.known() && *l.masked_softmax.value) sets.push_back("softmax=masked");
  if (linear_as_conv(l.exporter)) sets.push_back("projection=conv1x1");
  else a.push_back("projection form not read for " + l.exporter + ": MatMul priced");
  const bool window = l.new_entries_only.known() && !*l.new_entries_only.value;
  if (window) sets.push_back("returns=window");
  else if (!l.new_entries_only.known() && l.kv_update != "smart_mask")
    a.push_back("the graph's K/V output " + l.new_entries_only.word + ": the new entry priced");
  if (l.kv_update == "shift_pointer") a.push_back("shift_pointer update priced as a write in place");
  for (const auto& e : l.exceptions) a.push_back("exception not priced: " + e);
  const model::AxisScope scope(q.model);
  model::Variant v;
  try {
    v = model::design_space().parse("ring", sets, &scope);
  } catch (const Error& e) {
    return no(std::string("not a layout layoutx builds: ") + e.what());
  }
  // The layout is the published one; a form the cost model does not price yet is priced as its
  // axis's default (price_members), which the question says.
  model::design_space().priced_representative(v, a);
  for (model::LayerType type : {model::LayerType::kSliding, model::LayerType::kFull})
    if (q.model.count(type) > 0) q.layout.layers[type] = v;
  // The model-level axes.
  const int layers = q.model.num_layers();
  if (const auto range = per_graph ? record_layers(l.this_record) : std::nullopt) {
    q.layout.layers_per_part = range->second - range->first + 1;  // the record's own part: its parts' size
  } else if (l.graphs.known() && *l.graphs.value >= 1) {
    const int parts = *l.graphs.value;
    q.layout.layers_per_part = (layers + parts - 1) / parts;
  } else {
    q.layout.layers_per_part = 0;
    a.push_back("graph count " + l.graphs.word + ": one graph priced");
  }
  q.layout.embed_in_first = embedding_in_graph(l.exporter);
  q.layout.head_in_last = true;
  if (l.lm_head_bits.known()) {
    q.layout.head_precision = model::parse_precision(precision_of_bits(*l.lm_head_bits.value));
  } else {
    q.layout.head_precision = v.precision();
    a.push_back(std::string("LM head width unknown: ") + model::to_string(v.precision()) + " priced");
  }
  q.layout.kv_update = KvUpdate::kInPlace;
  q.layout.scope = r.includes == PublicIncludes::kGraphExecuteOnly ? StepScope::kGraphs : StepScope::kRunner;
  if (r.includes == PublicIncludes::kIncludesPrefill)
    a.push_back("the figure includes the prompt's prefill (one token a call): decode priced alone");
  return q;
}

std::optional<double> chip_factor_prior(const costmodel::PublicTimings& t, const std::string& device_chip,
                                        const std::string& chip) {
  if (chip == device_chip) return 1.0;
  auto d = t.chips.find(device_chip), c = t.chips.find(chip);
  if (d == t.chips.end() || c == t.chips.end() || !d->second.dram_peak_gbps.known() || !c->second.dram_peak_gbps.known())
    return std::nullopt;
  return *d->second.dram_peak_gbps.value / *c->second.dram_peak_gbps.value;
}

std::vector<PublicAsked> ask_public_records(const costmodel::PublicTimings& t, const std::string& chip) {
  std::vector<PublicAsked> out;
  for (const auto& r : t.records) {
    PublicAsked a;
    a.record = &r;
    a.question = public_question(r, t, chip, a.why_not);
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<PublicCheck> price_public_records(Evaluator& ev, const std::vector<PublicAsked>& asked,
                                              const costmodel::PublicTimings& t, const costmodel::RuntimeSpec& runtime,
                                              const std::string& chip) {
  std::vector<PublicCheck> out;
  for (const auto& a : asked) {
    const PublicRecord& r = *a.record;
    PublicCheck c;
    c.record = &r;
    c.why_not = a.why_not;
    if (const auto& q = a.question) {
      c.approximations = q->approximations;
      try {
        const ModelStep s = price_model(ev, q->model, q->ctx, q->layout, runtime);
        c.priced = true;
        c.device_ms = s.ms;
        c.chip_factor = *chip_factor_prior(t, chip, r.chip);
        c.predicted_ms = s.ms * c.chip_factor;
        c.low_ms = s.low_ms * c.chip_factor;
        c.high_ms = s.high_ms * c.chip_factor;
        c.parts = static_cast<int>(s.parts.size());
        if (r.kind == PublicKind::kDecodeFloor) {
          c.published_ms = 1000.0 / *r.tokens_per_s_at_least;
          c.bound_kept = c.predicted_ms <= c.published_ms;
          c.bound_kept_at_low = c.low_ms <= c.published_ms;
        } else {
          c.published_ms = *r.ms_token();
          c.error = c.predicted_ms / c.published_ms - 1;
        }
      } catch (const Error& e) {
        // The device's limits refuse it, yet the published export ran: the limit or layoutx's
        // weight count contradicts the record, which the reason says.
        c.why_not = std::string("refused by the device's limits, though the export ran: ") + e.what();
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<PublicCheck> check_public_records(Evaluator& ev, const costmodel::PublicTimings& t,
                                              const costmodel::RuntimeSpec& runtime, const std::string& chip) {
  return price_public_records(ev, ask_public_records(t, chip), t, runtime, chip);
}

std::string public_chip(const costmodel::DeviceSpec& device) {
  std::string chip = device.identity.soc_id;
  std::transform(chip.begin(), chip.end(), chip.begin(), [](unsigned char c) { return std::tolower(c); });
  return chip;
}

std::vector<ChipFactor> chip_factors(const std::vector<PublicCheck>& checks, const std::string& device_chip) {
  std::map<std::string, ChipFactor> by;
  std::map<std::string, std::vector<double>> ratios;
  for (const auto& c : checks) {
    if (!c.priced || c.record->chip == device_chip || c.device_ms <= 0) continue;
    ChipFactor& f = by[c.record->chip];
    f.chip = c.record->chip;
    f.prior = c.chip_factor;
    const double ratio = c.published_ms / c.device_ms;
    if (c.record->kind == PublicKind::kDecodeFloor) {
      ++f.floors;
      f.bound = f.bound ? std::min(*f.bound, ratio) : ratio;
    } else {
      ratios[f.chip].push_back(ratio);
    }
  }
  std::vector<ChipFactor> out;
  for (auto& [chip, f] : by) {
    auto& v = ratios[chip];
    f.rates = static_cast<int>(v.size());
    if (!v.empty()) {
      std::sort(v.begin(), v.end());
      f.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
      f.low = v.front();
      f.high = v.back();
    }
    out.push_back(f);
  }
  return out;
}

PublicSummary summarize_public(const std::vector<PublicCheck>& checks, const std::string& chip, bool own) {
  PublicSummary s;
  std::vector<double> abs;
  for (const auto& c : checks) {
    if (!c.priced || (c.record->chip == chip) != own) continue;
    if (c.record->kind == PublicKind::kDecodeFloor) {
      ++s.floors;
      s.kept += c.bound_kept;
      s.kept_at_low += c.bound_kept_at_low;
    } else {
      s.errors.push_back(c.error);
      abs.push_back(std::abs(c.error));
    }
  }
  s.median_abs_error = median(abs);
  s.median_error = median(s.errors);
  return s;
}

std::vector<MemberChecks> price_public_by_member(MixtureMembers& members, const costmodel::PublicTimings& t,
                                                 const costmodel::RuntimeSpec& runtime, const std::string& chip) {
  std::vector<MemberChecks> out;
  const std::vector<PublicAsked> asked = ask_public_records(t, chip);  // the same questions for every member
  for (size_t i = 0; i < members.size(); ++i) {
    Evaluator ev(members[i]);
    MemberChecks m;
    m.checks = price_public_records(ev, asked, t, runtime, chip);
    m.name = members.name(i);
    m.weight = members.weight(i);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<MemberChecks> price_public_by_member(const costmodel::Predictor& mixture, const costmodel::PublicTimings& t,
                                                 const costmodel::RuntimeSpec& runtime, const std::string& chip) {
  MixtureMembers members(mixture);
  return price_public_by_member(members, t, runtime, chip);
}

std::vector<HypothesisPublicFit> public_fit_by_hypothesis(const costmodel::Predictor& mixture,
                                                          const costmodel::PublicTimings& t,
                                                          const costmodel::RuntimeSpec& runtime, const std::string& chip) {
  std::vector<HypothesisPublicFit> out;
  for (const MemberChecks& m : price_public_by_member(mixture, t, runtime, chip)) {
    HypothesisPublicFit f;
    f.name = m.name;
    f.weight = m.weight;
    f.own = summarize_public(m.checks, chip, true);
    f.others = summarize_public(m.checks, chip, false);
    for (const auto& c : m.checks) {
      if (!c.priced || c.record->chip != chip || c.predicted_ms <= 0) continue;
      const double z0 = std::log(c.published_ms / c.predicted_ms);
      if (c.record->kind == PublicKind::kDecodeFloor) {
        f.log_likelihood += std::log(std::max(1e-300, 0.5 * std::erfc(-z0 / (kExportSpread * std::sqrt(2.0)))));
      } else {
        const double sd = std::hypot(c.record->rel_sd.value.value_or(kUnknownRelSd), kExportSpread);
        f.log_likelihood += -0.5 * (z0 / sd) * (z0 / sd) - std::log(sd);
      }
    }
    out.push_back(std::move(f));
  }
  // The members' weights with the records: the team's weight times the records' likelihood.
  double top = -std::numeric_limits<double>::infinity(), total = 0;
  for (const auto& f : out)
    if (f.weight > 0) top = std::max(top, f.log_likelihood);
  for (auto& f : out) total += f.weight_with_public = f.weight > 0 ? f.weight * std::exp(f.log_likelihood - top) : 0;
  for (auto& f : out) f.weight_with_public = total > 0 ? f.weight_with_public / total : 0;
  return out;
}

}  // namespace layoutx::explorer
