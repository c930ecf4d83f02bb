// The interface between the cost model and everything that asks it (explorer, db, CLI).
// Small on purpose (style.md: Halide's CostModel.h): build a graph, ask for a Prediction.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/graph.h"

namespace layoutx::costmodel {

// Whether a variant converts to a QNN context binary at its precision, from the records in
// configs/rules/. yes: every record of every form it uses says it converted; no: a record of
// one of its forms says the converter failed and none says otherwise; contested: records of one
// of its forms disagree; unknown: one of its forms was never tried at that precision.
enum class Compiles { kYes, kNo, kUnknown, kContested };
const char* to_string(Compiles c);  // "yes" / "no" / "unknown" / "contested"

struct Legality {
  Compiles compiles = Compiles::kYes;
  // One line per matched form whose outcome is not yes: the form id, the op it matched, the
  // outcome and every record behind it with its source (e.g. "explicit-softmax: attn/softmax/max
  // (ReduceMax ...) at w4a16: no; fail, converter exit code 14 (third export: ...)").
  std::vector<std::string> reasons;
};

// Cost of one lowered HTP op.
struct OpCost {
  std::string name;      // the lowered op's name (a graph op, or a fused group's first op)
  const char* kind = "";      // graph OpKind name (model::to_string: static storage)
  const char* op_class = "";  // the cost class the coefficients are kept per (e.g. "matmul_weight"; static)
  double ms = 0.0;
};

// The one interval level: every interval layoutx computes and prints is a two-sided normal
// interval at 90%, z = kZ90 (z_of_level(kIntervalLevel), as the saved calibrations spell it; a
// calibration saying another z is refused when read: costmodel/calibration.h).
inline constexpr double kIntervalLevel = 0.90;
inline constexpr double kZ90 = 1.645;

struct Prediction {
  double latency_ms = 0.0;          // point estimate for one decode step of this layer
  double low_ms = 0.0, high_ms = 0.0;  // prediction interval
  double interval_level = kIntervalLevel;  // the coverage the interval aims at
  double floor_ms = 0.0;            // roofline floor: bytes moved / DRAM bandwidth
  std::vector<OpCost> ops;          // per lowered op, sums to latency_ms
  Legality legality;
  std::string calibration_id;       // which calibration made this prediction
  // The layer's summed design row in the calibration's coefficient order (latency_ms =
  // design_row . theta / 1e3): the cached features a prediction can be recomputed from.
  std::vector<double> design_row;
};

// The linear-Gaussian belief behind a calibrated model's predictions, for value-of-information
// questions (layoutx next): latency_ms = design_row . theta / 1e3 with theta ~ N(mean,
// covariance) (us units, as the calibration keeps them); a new timing of a layer of latency L
// is taken to scatter around the model with sd noise_rel_sd * L (the calibration's model error).
struct CoefficientBelief {
  std::vector<double> mean;
  std::vector<double> covariance;  // mean.size() x mean.size(), row-major
  double noise_rel_sd = 0.0;
};

// z of a two-sided normal interval of coverage `level` (0.90 -> 1.645).
double z_of_level(double level);
// P(X < 0) for X ~ N(mean, sd^2); sd 0 gives the step (0.5 at mean 0).
double normal_below_zero(double mean, double sd);

// One component of a mixture of such beliefs (a competing hypothesis of the device): its weight,
// and a belief over the slice [offset, offset + belief.mean.size()) of the design row, so that
// row[offset..] . mean / 1e3 is that component's own latency for a graph.
struct BeliefComponent {
  double weight = 1.0;
  size_t offset = 0;
  CoefficientBelief belief;
};

// One hypothesis's figure for a graph (a mixture's member: Predictor::predict_each).
struct HypothesisFigure {
  std::string name;
  double weight = 0;
  Prediction prediction;
};

// Predicts a built layer graph. Implementations: the calibrated HTP model (galaxy-s25) and
// any other device spec + calibration pair.
class Predictor {
 public:
  virtual ~Predictor() = default;
  virtual Prediction predict(const model::LayerGraph& graph) const = 0;
  virtual std::string device() const = 0;          // device name, e.g. "galaxy-s25"
  virtual std::string calibration_id() const = 0;
  // Half-width (ms, at a's interval level) of the interval of latency(a) - latency(b). Two
  // variants share coefficients, so their errors are correlated and the difference is known
  // better than either latency. Default: the marginal intervals taken as independent.
  virtual double difference_half_width_ms(const Prediction& a, const Prediction& b) const;
  // Probability that a is faster than b (latency(a) < latency(b)) under the same belief.
  // Default: the difference taken as normal, with sigma = difference_half_width_ms over the z of
  // a's interval level. A mixture (HypothesisPredictor) sums its members' probabilities, so
  // members that disagree on the sign give what they say, not a normal with their spread.
  virtual double probability_faster(const Prediction& a, const Prediction& b) const;
  // The belief over the coefficients, when the model is linear in them; nullopt otherwise.
  virtual std::optional<CoefficientBelief> belief() const { return std::nullopt; }
  // The belief as a mixture (weights sum to 1). Default: belief() as the one component.
  virtual std::vector<BeliefComponent> belief_components() const;
  // The design row of a graph split by op class (costmodel/op_class.h names, and "graph" for the
  // graph-level terms): each entry's row covers only that class's ops, so the rows sum to
  // Prediction::design_row, and row . theta / 1e3 is the class's ms: what an op-level profile
  // of the graph observes. Empty when the model is not linear in its coefficients.
  virtual std::vector<std::pair<std::string, std::vector<double>>> class_rows(const model::LayerGraph&) const {
    return {};
  }
  // How many of the device's competing hypotheses it mixes (costmodel/hypothesis_predictor.h);
  // 0 when it is one calibration, not a mixture of hypotheses.
  virtual size_t hypothesis_count() const { return 0; }
  // Each mixed hypothesis's own figure for a graph, with its weight, in the mixture's order
  // (hypothesis_count() entries; empty for a predictor that mixes none).
  virtual std::vector<HypothesisFigure> predict_each(const model::LayerGraph&) const { return {}; }
  // The same hypotheses weighed anew (one weight per mixed hypothesis, in its order; the heaviest
  // holding kPredictorWeightMass kept, costmodel/mixture.h); nullptr when it mixes none.
  virtual std::unique_ptr<Predictor> reweighted(const std::vector<double>&) const { return nullptr; }
};

}  // namespace layoutx::costmodel
