// The JSON of what emit wrote, one way for every verb that writes bundles (emit, emit --parts):
// a bundle's files and a validation's figures.
#pragma once
#include "emit/bundle.h"
#include "emit/validate.h"
#include "support/json_writer.h"

namespace layoutx::cli {

// "dir", "onnx", "job", "submit_aihub", "qnn_sdk", "calibration_samples" (fields of the open object).
void write_bundle_files(JsonWriter& w, const emit::BundleFiles& f);
// "validation": {steps, snr_db, delta_snr_db, min_step_snr_db, max_abs_err, kv_snr_db, top1_agreement}.
void write_validation(JsonWriter& w, const emit::Validation& v);

}  // namespace layoutx::cli
