// Validated reading of YAML (and JSON, which yaml-cpp also parses) documents.
// Contract: every accessor records problems in an ErrorList instead of throwing, so one
// pass reports every problem; messages read "file:line:col: key.path: what is wrong".
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/error.h"

namespace layoutx {

// Parses a file; a syntax error throws Error naming file:line:col.
YAML::Node load_yaml_file(const std::string& path);
// Parses text (e.g. a test fixture) with `name` used in messages in place of a file path.
YAML::Node load_yaml_text(const std::string& text, const std::string& name);

// "file:line:col" of a node (1-based), or just "file" when yaml-cpp has no mark for it.
std::string where(const std::string& file, const YAML::Node& node);

// Reads the fields of one YAML map. Accessors mark a key as known; finish() reports every
// key that no accessor asked for ("unknown key"), so misspelt keys are never ignored.
class MapReader {
 public:
  // `path` is the dotted key path of this map for messages ("" at top level).
  MapReader(std::string file, YAML::Node node, std::string path, ErrorList& errors);

  bool ok() const { return is_map_; }
  bool has(std::string_view key) const;
  std::optional<int64_t> integer(std::string_view key, bool required,
                                 int64_t min = std::numeric_limits<int64_t>::min(),
                                 int64_t max = std::numeric_limits<int64_t>::max());
  std::optional<double> number(std::string_view key, bool required,
                               double min = -std::numeric_limits<double>::infinity(),
                               double max = std::numeric_limits<double>::infinity());
  std::optional<std::string> string(std::string_view key, bool required);
  std::optional<bool> boolean(std::string_view key, bool required);
  // The child node (map or sequence) for nested reading; marks the key known. Null if absent
  // (and an error if required); test with IsDefined() && !IsNull().
  YAML::Node child(std::string_view key, bool required);
  // Marks a key as allowed without reading it.
  void allow(std::string_view key) { known_.insert(std::string(key)); }
  // The entries (key, value) whose plain-name key no accessor asked for (and not allowed) so far,
  // in document order. A key that is not a plain name (null, a collection) is never one: finish()
  // reports it.
  std::vector<std::pair<std::string, YAML::Node>> unread_entries() const;
  // Reports unknown keys (those of unread_entries, and keys that are not plain names). Call once
  // after all accessors.
  void finish();

  // Dotted path of a key in this map, for messages.
  std::string key_path(std::string_view key) const;
  // "file:line:col: key.path: " prefix for a message about `key` (or the map itself).
  std::string at(std::string_view key) const;
  void error(std::string_view key, const std::string& what);
  const std::string& file() const { return file_; }
  const YAML::Node& node() const { return node_; }

 private:
  YAML::Node get(std::string_view key, bool required);
  std::string file_;
  YAML::Node node_;
  std::string path_;
  ErrorList& errors_;
  std::set<std::string> known_;
  bool is_map_ = false;
};

}  // namespace layoutx
