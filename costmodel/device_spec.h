// A device spec (configs/devices/*.yaml): what is known of the hardware, and the prior cost
// coefficients the calibration starts from. Loaded parse -> validate -> build (style.md).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "costmodel/op_class.h"
#include "costmodel/probe_spec.h"
#include "costmodel/runtime_spec.h"
#include "costmodel/structure.h"
#include "model/variant.h"

namespace layoutx::costmodel {

// Which feature a coefficient multiplies.
enum class Term {
  kDispatch,  // per op (feature: count); coefficient in microseconds
  kByte,      // per byte (feature: bytes); coefficient in microseconds per MB (1e6 bytes)
  kMac,       // per MAC (feature: macs); coefficient in microseconds per million MACs
  // Graph-level terms (costmodel/layer_features.h): no op class, one feature per layer graph.
  kGraph,  // per graph execute (feature: 1); coefficient in microseconds
  kSpill,  // per byte of the cache-sized live set above the VTCM budget; us per MB
  kStall,  // per weight byte of a layer whose live set exceeds the budget; us per MB
};
bool is_graph_term(Term t);

const char* to_string(Term t);

// Which side of a layer's time a coefficient occupies (costmodel/overlap.h): `unit:` in the
// device YAML. A device whose structure has no overlap adds every side, whatever its units.
enum class Unit { kSerial, kMemory, kCompute, kCopy };
const char* to_string(Unit u);

// One coefficient, shared by every (class, precision) cell it lists.
struct CoefficientSpec {
  std::string name;
  std::vector<OpClass> classes;
  std::vector<model::Precision> precisions;
  Term term = Term::kByte;
  double prior = 0;   // in the term's unit above (converted from dispatch_us / gbps / gmacs)
  double rel_sd = 1;  // prior standard deviation relative to `prior` (the ridge weight)
  // Smallest value physics allows (same unit as `prior`), from `max_gbps` / `max_gmacs`: the
  // fastest rate the hardware can reach (e.g. weights cannot stream faster than DRAM peak).
  // 0: only non-negativity.
  double min_value = 0;
  std::string reason;
  Unit unit = Unit::kSerial;  // `unit:` serial (default) | memory | compute | copy
};

// A named alternative of the device's physics: the base spec with some structure switches
// flipped, some coefficients dropped and others added. Carried as data; each is fitted.
struct HypothesisSpec {
  std::string name;
  std::string claim;   // what it says the hardware does
  std::string source;  // why it is plausible (device spec source tags)
  Structure structure;  // the base structure with this hypothesis's overrides applied
  std::vector<std::string> drop;
  std::vector<CoefficientSpec> add;
};

// A device's hypotheses, immutable once parsed and shared by every copy of the spec: a spec is
// copied per hypothesis (with_hypothesis) and per predictor, and copying the list each time cost
// more than the rest of the spec.
class HypothesisList {
 public:
  HypothesisList() = default;
  HypothesisList(std::vector<HypothesisSpec> v)  // NOLINT: a list is made from its vector
      : p_(std::make_shared<const std::vector<HypothesisSpec>>(std::move(v))) {}
  const std::vector<HypothesisSpec>& all() const { return p_ ? *p_ : none(); }
  size_t size() const { return all().size(); }
  bool empty() const { return all().empty(); }
  const HypothesisSpec& operator[](size_t i) const { return all()[i]; }
  std::vector<HypothesisSpec>::const_iterator begin() const { return all().begin(); }
  std::vector<HypothesisSpec>::const_iterator end() const { return all().end(); }
  void clear() { p_.reset(); }

 private:
  static const std::vector<HypothesisSpec>& none() {
    static const std::vector<HypothesisSpec> kNone;
    return kNone;
  }
  std::shared_ptr<const std::vector<HypothesisSpec>> p_;
};

// Who the device is: what a job bundle (emit/bundle.h) names and targets.
struct DeviceIdentity {
  std::string device;        // how job.yaml and the scripts name it, e.g. "Samsung Galaxy S25"
  std::string aihub_device;  // qai_hub.Device name, e.g. "Samsung Galaxy S25 (Family)"; "": not on AI Hub
  std::string soc;           // the SoC as the spec describes it, e.g. "Snapdragon 8 Elite (SM8750)"
  std::string soc_id;        // e.g. "SM8750"
  std::string htp_arch;      // Hexagon architecture, e.g. "v79"; "": no HTP (a CPU device)
};

// The files that calibrate the device, as written in its spec: relative to config_dir() (an
// absolute path is taken as is); resolve with device_file(). "": none.
struct CalibrationFiles {
  std::string measurements;  // the records `calibrate` fits by default (layer times, op shares)
  std::string saved;         // the saved calibration (`calibrate --update-shipped` writes it)
  std::string hypotheses;    // the saved hypothesis calibration (with hypothesis_axes)
  std::string rules;         // the converter legality rules; "": none (every form `unknown`)
};
// A calibration file's path on this machine: config_dir()/relative, or `relative` if absolute.
std::string device_file(const std::string& relative);

struct DeviceSpec {
  std::string name;
  std::string source;  // file it was read from
  DeviceIdentity identity;
  CalibrationFiles calibration;
  // The profile timings that are the layer's time on this device (db/schema.h boundary names):
  // what `calibrate --db` fits and `regress` compares with the prediction. Others (e.g. NetRun
  // wall time) are compared only with their own history.
  std::vector<std::string> boundaries;
  double dram_gbps = 0;
  double vtcm_mb = 0;
  int channel_pad = 1;
  std::vector<CoefficientSpec> coefficients;
  Structure structure;
  HypothesisList hypotheses;  // empty: the spec is one model
  std::string hypothesis;     // the hypothesis this spec was derived for ("" base)
  // Variants calibrate predicts under each hypothesis (`probes:`); empty: none printed.
  std::vector<ProbeSpec> probes;
  // The host's and the runtime's terms of a whole step and a partition's limits (`runtime:`).
  RuntimeSpec runtime;

  // Index into `coefficients` of the one pricing (class, precision, term), or -1 if none.
  int index(OpClass c, model::Precision p, Term t) const;
  // Index of the graph-level coefficient of term t at precision p (no classes), or -1.
  int graph_index(Term t, model::Precision p) const;
  // Precomputes index() for every (class, precision, op term): the pricing hot path asks it
  // per op. Called by the loaders; index() searches the list when the table is absent or stale.
  void build_index();
  std::vector<int> index_table;  // [class][precision][term], -1: none
  // Bytes per microsecond of DRAM at peak (the roofline floor's rate).
  double dram_bytes_per_us() const { return dram_gbps * 1e3; }
};

// The spec of one hypothesis: base coefficients minus `drop` plus `add`, its structure; no
// hypotheses of its own. Throws Error if a dropped name is unknown or a cell ends up priced twice.
DeviceSpec with_hypothesis(const DeviceSpec& base, const HypothesisSpec& h);

// Throws Error listing every problem (file:line:col: key: what), e.g. two coefficients pricing
// one cell, a class with no dispatch or byte term, an unknown class or precision.
DeviceSpec load_device(const std::string& path);
DeviceSpec load_device_text(const std::string& text, const std::string& name);
// "galaxy-s25" -> configs/devices/galaxy-s25.yaml; a path ending in .yaml is loaded as is. An
// unknown name is an Error listing the known devices.
DeviceSpec load_device_named(const std::string& name_or_path);
// The shipped device names (configs/devices/*.yaml), sorted.
std::vector<std::string> known_devices();

// The device every verb uses unless given --device.
inline constexpr const char* kDefaultDevice = "galaxy-s25";

// Unit conversions of the spec's physical rates into coefficient units.
inline double us_per_mb(double gbps) { return 1e3 / gbps; }    // 1e6 B / (gbps 1e9 B/s) in us
inline double us_per_mmac(double gmacs) { return 1e3 / gmacs; }

}  // namespace layoutx::costmodel
