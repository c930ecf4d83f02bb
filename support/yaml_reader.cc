#include "support/yaml_reader.h"

#include <map>
#include <sstream>
#include <vector>

#include "support/paths.h"

namespace layoutx {

namespace {
// A key that is there with a value (yaml-cpp's default Node is "defined" but null).
bool present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

std::string mark_text(const std::string& file, const YAML::Mark& m) {
  if (m.is_null()) return file;
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}
}  // namespace

YAML::Node load_yaml_text(const std::string& text, const std::string& name) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    throw Error(mark_text(name, e.mark) + ": cannot parse: " + e.msg);
  }
  // One document per file: a later one ("---" then content, e.g. two files concatenated) would
  // be dropped without a word. An empty trailing document ("---" at the end) is harmless.
  for (size_t i = 1; i < docs.size(); ++i)
    if (present(docs[i]))
      throw Error(mark_text(name, docs[i].Mark()) + ": a second YAML document; layoutx reads one document per file "
                  "(remove the '---' and what follows, or put it in its own file)");
  return docs.empty() ? YAML::Node() : docs.front();
}

YAML::Node load_yaml_file(const std::string& path) {
  return load_yaml_text(read_text_file(path), path);
}

std::string where(const std::string& file, const YAML::Node& node) {
  if (!node.IsDefined()) return file;
  return mark_text(file, node.Mark());
}

MapReader::MapReader(std::string file, YAML::Node node, std::string path, ErrorList& errors)
    : file_(std::move(file)), node_(std::move(node)), path_(std::move(path)), errors_(errors) {
  is_map_ = node_.IsDefined() && node_.IsMap();
  if (!is_map_) {
    errors_.add(where(file_, node_) + ": " + (path_.empty() ? std::string("document") : path_) +
                ": must be a mapping of keys to values");
    return;
  }
  // yaml-cpp keeps every copy of a repeated key and lookups see the first: a second value
  // would be ignored without a word, so a repeated key is an error naming both places.
  std::map<std::string, YAML::Node> first;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string k = it->first.IsScalar() ? it->first.Scalar() : std::string();
    auto [at, inserted] = first.emplace(k, it->first);
    if (!inserted)
      errors_.add(where(file_, it->first) + ": " + key_path(k) + ": key given twice (first at " +
                  where(file_, at->second) + ")");
  }
}

std::string MapReader::key_path(std::string_view key) const {
  if (key.empty()) return path_.empty() ? "document" : path_;
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::string MapReader::at(std::string_view key) const {
  // Note: yaml-cpp nodes have reference semantics; `a = b` would overwrite a's node. Use reset.
  const YAML::Node& map = node_;
  YAML::Node n;
  n.reset(map);
  if (is_map_ && !key.empty() && map[std::string(key)]) n.reset(map[std::string(key)]);
  return where(file_, n) + ": " + key_path(key) + ": ";
}

void MapReader::error(std::string_view key, const std::string& what) {
  errors_.add(at(key) + what);
}

bool MapReader::has(std::string_view key) const {
  const YAML::Node& map = node_;
  return is_map_ && map[std::string(key)].IsDefined() && !map[std::string(key)].IsNull();
}

YAML::Node MapReader::get(std::string_view key, bool required) {
  known_.insert(std::string(key));
  if (!is_map_) return YAML::Node();
  const YAML::Node& map = node_;  // const lookup: never inserts the key
  YAML::Node n = map[std::string(key)];
  if (!n.IsDefined() || n.IsNull()) {
    if (required) errors_.add(where(file_, node_) + ": " + key_path(key) + ": required key is missing");
    return YAML::Node();
  }
  return n;
}

std::optional<int64_t> MapReader::integer(std::string_view key, bool required, int64_t min,
                                          int64_t max) {
  YAML::Node n = get(key, required);
  if (!present(n)) return std::nullopt;
  int64_t v = 0;
  if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v)) {
    error(key, "must be an integer, got " + (n.IsScalar() ? "'" + n.Scalar() + "'" : std::string("a collection")));
    return std::nullopt;
  }
  if (v < min || v > max) {
    std::string range = min == 1 && max == std::numeric_limits<int64_t>::max()
                            ? "a positive integer"
                            : "an integer in [" + std::to_string(min) + ", " +
                                  (max == std::numeric_limits<int64_t>::max() ? "inf" : std::to_string(max)) + "]";
    error(key, "must be " + range + ", got " + std::to_string(v));
    return std::nullopt;
  }
  return v;
}

std::optional<double> MapReader::number(std::string_view key, bool required, double min, double max) {
  YAML::Node n = get(key, required);
  if (!present(n)) return std::nullopt;
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v)) {
    error(key, "must be a number, got " + (n.IsScalar() ? "'" + n.Scalar() + "'" : std::string("a collection")));
    return std::nullopt;
  }
  if (!(v >= min && v <= max)) {
    std::ostringstream os;
    os << "must be in [" << min << ", " << max << "], got " << v;
    error(key, os.str());
    return std::nullopt;
  }
  return v;
}

std::optional<std::string> MapReader::string(std::string_view key, bool required) {
  YAML::Node n = get(key, required);
  if (!present(n)) return std::nullopt;
  if (!n.IsScalar()) {
    error(key, "must be a string, got a collection");
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<bool> MapReader::boolean(std::string_view key, bool required) {
  YAML::Node n = get(key, required);
  if (!present(n)) return std::nullopt;
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
    error(key, "must be true or false, got " + (n.IsScalar() ? "'" + n.Scalar() + "'" : std::string("a collection")));
    return std::nullopt;
  }
  return v;
}

YAML::Node MapReader::child(std::string_view key, bool required) { return get(key, required); }

std::vector<std::pair<std::string, YAML::Node>> MapReader::unread_entries() const {
  std::vector<std::pair<std::string, YAML::Node>> out;
  if (!is_map_) return out;
  for (auto it = node_.begin(); it != node_.end(); ++it)
    if (it->first.IsScalar() && !known_.count(it->first.Scalar())) out.emplace_back(it->first.Scalar(), it->second);
  return out;
}

void MapReader::finish() {
  if (!is_map_) return;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) {
      errors_.add(where(file_, it->first) + ": " + key_path("") + ": a key must be a plain name, got " +
                  (it->first.IsNull() ? "an empty key" : "a collection"));
      continue;
    }
    std::string k = it->first.Scalar();
    if (!known_.count(k)) {
      std::string allowed;
      for (const auto& a : known_) allowed += (allowed.empty() ? "" : ", ") + a;
      errors_.add(where(file_, it->first) + ": " + key_path(k) + ": unknown key (allowed: " + allowed + ")");
    }
  }
}

}  // namespace layoutx
