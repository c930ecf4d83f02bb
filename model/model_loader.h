// Loading ModelSpecs: our YAML (configs/models/*.yaml) and Hugging Face config.json files.
// Both go through parse -> validate (unknown keys and wrong types are errors, all collected,
// each naming file:line:col and key) -> build.
#pragma once
#include <string>

#include "model/model_spec.h"

namespace layoutx::model {

// Our YAML model spec. Throws Error listing every problem.
ModelSpec load_model_yaml(const std::string& path);
// Same, from text; `name` stands for the file in messages.
ModelSpec load_model_yaml_text(const std::string& text, const std::string& name);

// A Hugging Face config.json (Spark2_5, Gemma 2/3, Mistral, Cohere2, Llama, Qwen families).
ModelSpec import_hf_config(const std::string& path);
ModelSpec import_hf_config_text(const std::string& text, const std::string& name);

// What users pass to --model: a path ending in .json (HF config), a path to a .yaml, or a
// shipped model name ("spark-x2.5-1.7b" -> configs/models/spark-x2.5-1.7b.yaml).
ModelSpec load_model(const std::string& path_or_name);

// Default model of every verb.
inline constexpr const char* kDefaultModel = "spark-x2.5-1.7b";

// Overrides one field by its YAML key (whatif --set-model sliding_window=1024); re-validates.
// Throws Error naming the key and the allowed keys.
void set_model_field(ModelSpec& spec, const std::string& key, const std::string& value);

}  // namespace layoutx::model
