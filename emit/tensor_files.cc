#include "emit/tensor_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/atomic_file.h"
#include "support/error.h"
#include "support/json_writer.h"
#include "support/yaml_reader.h"

namespace layoutx::emit {

namespace fs = std::filesystem;

void write_tensors(const std::string& dir, const TensorMap& tensors) {
  ensure_directory(dir);
  std::ostringstream index;
  {
    JsonWriter w(index);
    w.begin_object();
    w.key("tensors").begin_array();
    for (const auto& [name, t] : tensors) {
      if (static_cast<int64_t>(t.data.size()) != model::numel(t.shape))
        throw Error("tensor '" + name + "': " + std::to_string(t.data.size()) + " values for shape " +
                    model::to_string(t.shape));
      const std::string file = name + ".bin";
      write_file_atomically(fs::path(dir) / file,
                            std::string_view(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float)));
      w.begin_object();
      w.field("name", name);
      w.field("file", file);
      w.field("shape", t.shape);
      w.field("dtype", "float32");
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  index << "\n";
  write_file_atomically(fs::path(dir) / "tensors.json", index.str());
}

TensorMap read_tensors(const std::string& dir) {
  const std::string index_path = (fs::path(dir) / "tensors.json").string();
  std::error_code ec;
  if (!fs::exists(index_path, ec)) throw Error(index_path + ": no such file");
  YAML::Node root = load_yaml_file(index_path);
  ErrorList errors;
  TensorMap out;
  MapReader top(index_path, root, "", errors);
  YAML::Node list = top.child("tensors", true);
  top.finish();
  if (list.IsDefined() && list.IsSequence()) {
    for (size_t i = 0; i < list.size(); ++i) {
      MapReader r(index_path, list[i], "tensors[" + std::to_string(i) + "]", errors);
      auto name = r.string("name", true);
      auto file = r.string("file", true);
      auto dtype = r.string("dtype", true);
      YAML::Node shape_node = r.child("shape", true);
      r.finish();
      if (!name || !file || !dtype || !shape_node.IsSequence()) continue;
      if (*dtype != "float32") {
        r.error("dtype", "only float32 is supported, got " + *dtype);
        continue;
      }
      Tensor t;
      bool shape_ok = true;
      for (const auto& d : shape_node) {
        int64_t dim = 0;
        shape_ok = shape_ok && d.IsScalar() && YAML::convert<int64_t>::decode(d, dim) && dim >= 0;
        t.shape.push_back(dim);
      }
      if (!shape_ok) {
        r.error("shape", "must be a list of non-negative integers");
        continue;
      }
      const auto path = fs::path(dir) / *file;
      std::ifstream f(path, std::ios::binary);
      if (!f) {
        errors.add(path.string() + ": no such file (named by " + index_path + ")");
        continue;
      }
      const auto bytes = static_cast<int64_t>(fs::file_size(path, ec));
      if (ec) {
        errors.add(path.string() + ": cannot read its size (" + ec.message() + ")");
        continue;
      }
      if (bytes != 4 * model::numel(t.shape)) {
        errors.add(path.string() + ": " + std::to_string(bytes) + " bytes, but shape " + model::to_string(t.shape) +
                   " of float32 needs " + std::to_string(4 * model::numel(t.shape)));
        continue;
      }
      t.data.resize(static_cast<size_t>(model::numel(t.shape)));
      f.read(reinterpret_cast<char*>(t.data.data()), bytes);
      out[*name] = std::move(t);
    }
  }
  errors.throw_if_any();
  return out;
}

}  // namespace layoutx::emit
