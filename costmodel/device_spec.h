// A device spec (configs/devices/*.yaml): what is known of the hardware, and the prior cost
// coefficients the calibration starts from. Loaded parse -> validate -> build (style.md).
#pragma once
#include <string>
#include <vector>

#include "costmodel/op_class.h"
#include "model/variant.h"

namespace layoutx::costmodel {

// Which feature a coefficient multiplies.
enum class Term {
  kDispatch,  // per op (feature: count); coefficient in microseconds
  kByte,      // per byte (feature: bytes); coefficient in microseconds per MB (1e6 bytes)
  kMac,       // per MAC (feature: macs); coefficient in microseconds per million MACs
};
const char* to_string(Term t);

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
};

struct DeviceSpec {
  std::string name;
  std::string source;  // file it was read from
  double dram_gbps = 0;
  double vtcm_mb = 0;
  int channel_pad = 1;
  std::vector<CoefficientSpec> coefficients;

  // Index into `coefficients` of the one pricing (class, precision, term), or -1 if none.
  int index(OpClass c, model::Precision p, Term t) const;
  // Bytes per microsecond of DRAM at peak (the roofline floor's rate).
  double dram_bytes_per_us() const { return dram_gbps * 1e3; }
};

// Throws Error listing every problem (file:line:col: key: what), e.g. two coefficients pricing
// one cell, a class with no dispatch or byte term, an unknown class or precision.
DeviceSpec load_device(const std::string& path);
DeviceSpec load_device_text(const std::string& text, const std::string& name);
// "galaxy-s25" -> configs/devices/galaxy-s25.yaml; a path ending in .yaml is loaded as is.
DeviceSpec load_device_named(const std::string& name_or_path);

// Unit conversions of the spec's physical rates into coefficient units.
inline double us_per_mb(double gbps) { return 1e3 / gbps; }    // 1e6 B / (gbps 1e9 B/s) in us
inline double us_per_mmac(double gmacs) { return 1e3 / gmacs; }

}  // namespace layoutx::costmodel
