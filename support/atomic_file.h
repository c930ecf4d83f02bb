// Writing a file so that a reader sees either the old file or the whole new one, never a torn or
// half-written one, even with several writers of the same path at once.
#pragma once
#include <filesystem>
#include <string_view>

namespace layoutx {

// Writes `contents` to `target` atomically: a unique temporary file in the target's own folder
// (mkstemp), fsync, then rename over the target (POSIX rename is atomic within one filesystem).
// Concurrent writers of one path each rename a complete file; the last rename wins.
// Throws layoutx::Error naming the path when the folder is missing or not a folder, is not
// writable, the target is a folder, or the write fails; the temporary file is removed on failure.
void write_file_atomically(const std::filesystem::path& target, std::string_view contents);

// Checks, before any work is done, that `target` could be written as a file: its folder exists
// and is a writable folder, and the target itself is not a folder. Throws layoutx::Error if not.
void check_file_target(const std::filesystem::path& target);

// Checks, before any work is done, that `dir` could be used as an output folder without creating
// anything yet: it is a writable folder, or the nearest existing ancestor is a writable folder
// (so create_directories would succeed). Throws layoutx::Error naming the path if not, e.g. when
// a component is a file ("not a folder") or the ancestor is read-only or permission-denied.
void check_directory_target(const std::filesystem::path& dir);

// Creates `dir` (and parents) if missing; throws layoutx::Error naming it if that fails or if it
// exists and is not a writable folder.
void ensure_directory(const std::filesystem::path& dir);

// A folder written as a whole: its files are built in a unique staging folder beside the target
// (mkdtemp), then the staging folder is renamed onto the target, so nothing half-written is ever
// at the target's path. The target must not exist, or be an empty folder; both throw Error
// naming the path otherwise. The caller removes the staging folder if it gives up (StagedFolder
// does that).
class StagedFolder {
 public:
  explicit StagedFolder(std::filesystem::path target);
  ~StagedFolder();  // removes the staging folder unless published
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;
  const std::filesystem::path& path() const { return staging_; }  // write the contents here
  void publish();  // renames onto the target

 private:
  std::filesystem::path target_, staging_;
  bool published_ = false;
};

}  // namespace layoutx
