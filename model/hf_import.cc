// Placeholder until the HF importer lands (issue #2).
#include "model/model_loader.h"
#include "support/error.h"
namespace layoutx::model {
ModelSpec import_hf_config(const std::string& path) { throw Error(path + ": HF import not implemented yet"); }
ModelSpec import_hf_config_text(const std::string&, const std::string& name) { throw Error(name + ": not implemented"); }
}  // namespace layoutx::model
