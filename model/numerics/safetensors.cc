#include "model/numerics/safetensors.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/numerics/float16.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/yaml_reader.h"

namespace layoutx::model::numerics {

namespace {

// Bytes per element of the safetensors dtypes; 0 if unknown.
int dtype_size(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

uint64_t read_u64_le(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string shape_text(const Shape& s) { return to_string(s); }

// bfloat16 bits of x, round to nearest even (NaN kept).
uint16_t to_bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float from_bf16_bits(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

const std::vector<Role>& weight_roles() {
  static const std::vector<Role> r{Role::kInputNorm, Role::kQkv,     Role::kHeadGate, Role::kOutProj,
                                   Role::kPostNorm,  Role::kMlpGate, Role::kMlpUp,    Role::kMlpDown};
  return r;
}

}  // namespace

SafetensorsFile::SafetensorsFile(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw Error(path_ + ": cannot open the safetensors file");
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path_, ec);
  if (ec) throw Error(path_ + ": cannot read its size: " + ec.message());
  if (size < 8)
    throw Error(path_ + ": truncated: " + std::to_string(size) +
                " bytes, a safetensors file starts with an 8-byte header length");
  unsigned char len_bytes[8];
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  const uint64_t header_len = read_u64_le(len_bytes);
  if (header_len > size - 8)
    throw Error(path_ + ": truncated: the header length says " + std::to_string(header_len) + " bytes, but only " +
                std::to_string(size - 8) + " follow");
  std::string header(static_cast<size_t>(header_len), '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  data_start_ = 8 + header_len;
  const uint64_t data_size = size - data_start_;

  YAML::Node root;
  try {
    root = YAML::Load(header);
  } catch (const YAML::Exception& e) {
    throw Error(path_ + ": header is not valid JSON: " + e.msg);
  }
  if (!root.IsMap()) throw Error(path_ + ": header is not a JSON object");
  ErrorList errors;
  for (const auto& kvp : root) {
    if (!kvp.first.IsScalar()) {
      errors.add(path_ + ": header: a tensor name must be a string");
      continue;
    }
    const std::string name = kvp.first.Scalar();
    if (name == "__metadata__") continue;
    const YAML::Node& e = kvp.second;
    const std::string at = path_ + ": tensor '" + name + "': ";
    if (!e.IsMap() || !e["dtype"] || !e["shape"] || !e["data_offsets"] || !e["shape"].IsSequence() ||
        !e["data_offsets"].IsSequence() || e["data_offsets"].size() != 2) {
      errors.add(at + "needs dtype, shape (a list) and data_offsets ([begin, end])");
      continue;
    }
    SafetensorsEntry entry;
    try {
      entry.dtype = e["dtype"].as<std::string>();
      for (const auto& d : e["shape"]) entry.shape.push_back(d.as<int64_t>());
      entry.begin = e["data_offsets"][0].as<uint64_t>();
      entry.end = e["data_offsets"][1].as<uint64_t>();
    } catch (const YAML::Exception&) {
      errors.add(at + "shape and data_offsets must be non-negative integers");
      continue;
    }
    const int esize = dtype_size(entry.dtype);
    if (esize == 0) {
      errors.add(at + "unknown dtype '" + entry.dtype + "'");
      continue;
    }
    bool bad_dim = false;
    for (int64_t d : entry.shape) bad_dim |= d < 0;
    if (bad_dim) {
      errors.add(at + "shape " + shape_text(entry.shape) + " has a negative dimension");
      continue;
    }
    if (entry.end < entry.begin) {
      errors.add(at + "data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) +
                 ") end before they begin");
      continue;
    }
    const uint64_t need = uint64_t(numel(entry.shape)) * esize;
    if (entry.end - entry.begin != need) {
      errors.add(at + "the header lies about its size: shape " + shape_text(entry.shape) + " of " + entry.dtype +
                 " needs " + std::to_string(need) + " bytes, data_offsets give " +
                 std::to_string(entry.end - entry.begin));
      continue;
    }
    if (entry.end > data_size) {
      errors.add(at + "truncated: its data ends at byte " + std::to_string(entry.end) +
                 " of the data section, which holds only " + std::to_string(data_size) + " bytes");
      continue;
    }
    entries_.emplace(name, std::move(entry));
  }
  errors.throw_if_any();
}

Tensor<double> SafetensorsFile::read(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw Error(path_ + ": no tensor named '" + name + "'");
  const SafetensorsEntry& e = it->second;
  if (e.dtype != "F32" && e.dtype != "F16" && e.dtype != "BF16")
    throw Error(path_ + ": tensor '" + name + "': dtype " + e.dtype + " is not supported (F32, F16, BF16)");
  std::ifstream in(path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(data_start_ + e.begin));
  std::vector<unsigned char> bytes(e.end - e.begin);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in) throw Error(path_ + ": tensor '" + name + "': read failed (file changed or truncated)");
  Tensor<double> t(e.shape);
  const unsigned char* p = bytes.data();
  for (int64_t i = 0; i < t.size(); ++i) {
    if (e.dtype == "F32") {
      uint32_t u = uint32_t(p[4 * i]) | uint32_t(p[4 * i + 1]) << 8 | uint32_t(p[4 * i + 2]) << 16 |
                   uint32_t(p[4 * i + 3]) << 24;
      float f;
      std::memcpy(&f, &u, 4);
      t[i] = f;
    } else {
      const auto h = static_cast<uint16_t>(p[2 * i] | p[2 * i + 1] << 8);
      t[i] = e.dtype == "F16" ? half_bits_to_float(h) : from_bf16_bits(h);
    }
  }
  return t;
}

void write_safetensors(const std::string& path, const std::map<std::string, Tensor<double>>& tensors,
                       const std::string& dtype) {
  const int esize = dtype == "F32" ? 4 : (dtype == "F16" || dtype == "BF16") ? 2 : 0;
  if (esize == 0) throw Error("write_safetensors: dtype must be F32, F16 or BF16, got " + dtype);
  std::ostringstream header;
  std::string data;
  header << "{";
  bool first = true;
  for (const auto& [name, t] : tensors) {
    const uint64_t begin = data.size();
    for (double x : t.data) {
      unsigned char b[4];
      if (esize == 4) {
        const float f = static_cast<float>(x);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        for (int k = 0; k < 4; ++k) b[k] = static_cast<unsigned char>(u >> (8 * k));
      } else {
        const uint16_t h = dtype == "F16" ? float_to_half_bits(static_cast<float>(x)) : to_bf16_bits(static_cast<float>(x));
        b[0] = static_cast<unsigned char>(h);
        b[1] = static_cast<unsigned char>(h >> 8);
      }
      data.append(reinterpret_cast<const char*>(b), esize);
    }
    header << (first ? "" : ",") << "\"" << name << "\":{\"dtype\":\"" << dtype << "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) header << (i ? "," : "") << t.shape[i];
    header << "],\"data_offsets\":[" << begin << "," << data.size() << "]}";
    first = false;
  }
  header << "}";
  std::string h = header.str();
  while (h.size() % 8) h += ' ';  // the format pads the header with spaces to an 8-byte boundary
  unsigned char len[8];
  for (int k = 0; k < 8; ++k) len[k] = static_cast<unsigned char>(uint64_t(h.size()) >> (8 * k));
  std::string out(reinterpret_cast<const char*>(len), 8);
  out += h;
  out += data;
  write_file_atomically(path, out);
}

WeightMap load_weight_map_text(const std::string& text, const std::string& name) {
  const YAML::Node root = load_yaml_text(text, name);
  ErrorList errors;
  MapReader top(name, root, "", errors);
  WeightMap m;
  m.source = name;
  if (auto layout = top.string("linear_layout", false)) {
    if (*layout == "out_in") m.linear_out_in = true;
    else if (*layout == "in_out") m.linear_out_in = false;
    else top.error("linear_layout", "must be out_in or in_out, got '" + *layout + "'");
  }
  if (auto off = top.number("norm_offset", false)) m.norm_offset = *off;
  YAML::Node tensors = top.child("tensors", true);
  if (tensors.IsDefined() && !tensors.IsNull()) {
    MapReader t(name, tensors, top.key_path("tensors"), errors);
    for (Role r : weight_roles())
      if (auto s = t.string(role_name(r), r != Role::kHeadGate)) m.names[r] = *s;
    t.finish();
  }
  top.finish();
  errors.throw_if_any();
  return m;
}

WeightMap load_weight_map(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open the weight map");
  std::stringstream ss;
  ss << in.rdbuf();
  return load_weight_map_text(ss.str(), path);
}

LayerWeights load_layer_weights(const SafetensorsFile& file, const WeightMap& map, const LayerSpec& layer,
                                int layer_index) {
  LayerWeights w;
  ErrorList errors;
  for (const auto& [role, shape] : weight_shapes(layer)) {
    auto it = map.names.find(role);
    if (it == map.names.end()) {
      errors.add(map.source + ": tensors." + role_name(role) + ": no tensor name given, the layer needs this weight");
      continue;
    }
    std::string name = it->second;
    for (size_t p; (p = name.find("{i}")) != std::string::npos;) name.replace(p, 3, std::to_string(layer_index));
    const std::string what = file.path() + ": tensor '" + name + "' (" + role_name(role) + ")";
    if (!file.has(name)) {
      errors.add(what + ": missing from the file");
      continue;
    }
    const bool transpose = is_projection(role) && map.linear_out_in;
    const Shape stored = transpose ? Shape{shape[1], shape[0]} : shape;
    const SafetensorsEntry& e = file.entries().at(name);
    if (e.shape != stored) {
      errors.add(what + ": shape " + to_string(e.shape) + ", the layer needs " + to_string(stored) +
                 (transpose ? " ([out, in], as nn.Linear stores it)" : ""));
      continue;
    }
    try {
      Tensor<double> t = file.read(name);
      if (transpose) {
        Tensor<double> tt(shape);
        const int64_t rows = stored[0], cols = stored[1];
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) tt[c * rows + r] = t[r * cols + c];
        t = std::move(tt);
      }
      if (!is_projection(role))
        for (auto& x : t.data) x += map.norm_offset;
      w.emplace(role, std::move(t));
    } catch (const Error& ex) {
      errors.add(ex.what());
    }
  }
  errors.throw_if_any();
  return w;
}

}  // namespace layoutx::model::numerics
