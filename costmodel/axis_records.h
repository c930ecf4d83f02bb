// Conversion records by design-space axis value (configs/rules/exporter-forms.yaml): what is known
// of whether the QNN HTP converter takes one of the exporters' forms (kv_dtype=u8, k_layout=rows,
// weight_quant=block64, ...) at a precision, with who reported it. A form of this kind is a whole
// export recipe, not an op pattern, so it is matched by the variant's axis value; the op-form
// rules (costmodel/legality.h) still judge every op of the graph.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/legality.h"

namespace layoutx::costmodel {


// AxisRecords (the struct) is in costmodel/legality.h, a part of the RuleSet.

// Reads the file; throws Error listing every problem (file:line:col: key: what). Axes and values
// must be the design space's.
AxisRecords load_axis_records(const std::string& path);
AxisRecords load_axis_records_text(const std::string& text, const std::string& name);

// The variant's off-default axis values judged by the records at its precision: the worst
// outcome, with one reason per value whose outcome is not yes (appended to `l`).
void check_axis_records(const AxisRecords& r, const model::Variant& v, Legality& l);

}  // namespace layoutx::costmodel
