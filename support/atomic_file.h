// Writing a file so that a reader sees either the old file or the whole new one, never a torn or
// half-written one, even with several writers of the same path at once; and a folder the same way.
// Every target is checked first by the one output rule (support/output_target.h).
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "support/output_target.h"

namespace layoutx {

// Writes `contents` to `target` atomically: a unique temporary file in the target's own folder
// (mkstemp), fsync, then rename over the target (POSIX rename is atomic within one filesystem).
// Concurrent writers of one path each rename a complete file; the last rename wins. A symbolic
// link is written through (its final target is replaced, the link stays). Throws layoutx::Error
// naming the path when check_file_target refuses it or the write fails (a full disk: "write
// failed (No space left on device)"); the temporary file is removed on failure, and one left by
// a killed run of this host is removed by the next write beside it.
void write_file_atomically(const std::filesystem::path& target, std::string_view contents);

// A folder written as a whole: its files are built in a unique staging folder beside the target
// (mkdtemp), then the staging folder is renamed onto the target, so nothing half-written is ever
// at the target's path, and a failed or killed run leaves nothing in it. The target is checked
// by check_folder_target: it must not exist, or be an empty folder, or (`replace`, the verbs'
// --force) any folder, whose contents the new ones then replace in one exchange. The destructor
// removes the staging folder unless published; a staging folder left by a killed run of this
// host is removed when the next one is made beside it.
class StagedFolder {
 public:
  explicit StagedFolder(std::filesystem::path target, bool replace = false, std::string_view flag = {});
  ~StagedFolder();  // removes the staging folder unless published
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;
  const std::filesystem::path& path() const { return staging_; }  // write the contents here
  void publish();  // renames onto the target

 private:
  std::filesystem::path target_, staging_;
  std::string shown_;  // the target as the user gave it (and the flag), for messages
  bool replace_ = false;
  bool published_ = false;
};

}  // namespace layoutx
