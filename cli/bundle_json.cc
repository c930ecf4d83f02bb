#include "cli/bundle_json.h"

namespace layoutx::cli {

void write_bundle_files(JsonWriter& w, const emit::BundleFiles& f) {
  w.field("dir", f.dir);
  w.field("onnx", f.onnx);
  w.field("job", f.job);
  w.field("submit_aihub", f.aihub_script);
  w.field("qnn_sdk", f.qnn_script);
  w.field("calibration_samples", static_cast<int64_t>(f.calibration.size()));
}

void write_validation(JsonWriter& w, const emit::Validation& v) {
  w.key("validation").begin_object();
  w.field("steps", v.steps);
  w.field("snr_db", v.hidden.snr_db);
  w.field("delta_snr_db", v.hidden.delta_snr_db);
  w.field("min_step_snr_db", v.hidden.min_step_snr_db);
  w.field("max_abs_err", v.hidden.max_abs_err);
  w.field("kv_snr_db", v.kv_snr_db);
  w.field("top1_agreement", v.hidden.top1_agreement);
  w.end_object();
}

}  // namespace layoutx::cli
