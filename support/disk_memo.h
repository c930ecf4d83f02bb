// Results that are costly to compute and depend only on their key and on the code computing
// them, kept between runs: one small file a key in a cache folder (the user's cache by default),
// each written atomically. A value is returned only to the same code (code_stamp) and the same
// key that saved it; anything else (no folder, an unreadable, foreign or torn file) is a miss,
// never an error, so the caller computes as if there were no memo. Writing is best effort.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace layoutx {

class DiskMemo {
 public:
  // `folder`: where the files are (created on the first put); nullopt turns the memo off, as does
  // an empty `code_stamp` (code that cannot say what it is must not trust what it finds).
  DiskMemo(std::optional<std::filesystem::path> folder, std::string code_stamp);
  // Keys and values are one line each (no '\n'); a value with one is not kept.
  std::optional<std::string> get(std::string_view key) const;
  void put(std::string_view key, std::string_view value) const;
  bool enabled() const { return folder_.has_value(); }

 private:
  std::filesystem::path file_for(std::string_view key) const;
  std::optional<std::filesystem::path> folder_;
  std::string stamp_;
};

// The folder of the memo `name`: $LAYOUTX_CACHE_DIR/name ($LAYOUTX_CACHE_DIR set but empty: none,
// memos off), else $XDG_CACHE_HOME/layoutx/name, else $HOME/.cache/layoutx/name, else none.
std::optional<std::filesystem::path> user_cache_folder(std::string_view name);

// What identifies the running code: the path, size and modification time of the file it was
// loaded from (the executable, or the Python module that links layoutx in), and the CPU features
// libm's variants depend on; "" if unknown. A rebuild changes it, so a memo never serves values
// computed by other code.
std::string code_stamp();

// The part of code_stamp that is not the file: the CPU features libm's variants depend on. A
// memo whose values are shared by every build that computes them the same way (the CLI and the
// Python module) stamps them with its own version of that computation and this.
std::string cpu_stamp();

}  // namespace layoutx
