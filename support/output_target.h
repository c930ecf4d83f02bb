// The one rule for every path layoutx writes (a file, a folder, a database file), checked before
// any work so that a run never computes for minutes and then finds it cannot write:
//   - an empty path is an error (an unset shell variable must not mean "no output");
//   - an existing target that is not a regular file (a folder, for folder outputs) is refused: a
//     character or block device, a FIFO, a socket. layoutx publishes an output by renaming a
//     complete file over the target, which would put a regular file where /dev/null was;
//   - a symbolic link is written through: the link stays and its final target gets the new
//     contents (an exporter that links the layout file into its own tree sees the new one);
//   - the folder that holds the target exists (it is never created) and is writable.
// Messages name the path and, when the caller gives it, the flag: "--out: /dev/full is a
// character device, not a regular file ...".
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace layoutx {

// Checks that `target` may be written as a file and returns the path that is actually replaced:
// `target` itself, or the final target of the symbolic link(s) it is. Throws layoutx::Error.
std::filesystem::path check_file_target(const std::filesystem::path& target, std::string_view flag = {});

// The same rule for a folder output (staged beside the target, support/atomic_file.h): an
// existing target must be a folder (a symbolic link to one is written through), and an empty
// one unless `replace` (--force); its parent folder must exist and be writable. Returns the
// folder that is actually replaced. Throws layoutx::Error.
std::filesystem::path check_folder_target(const std::filesystem::path& target, bool replace,
                                          std::string_view flag = {});

// A working folder that is reused between runs (measure --out): it is a writable folder, or the
// nearest existing ancestor is a writable folder (so create_directories would succeed). Throws
// layoutx::Error naming the path, e.g. when a component is a file ("not a folder").
void check_directory_target(const std::filesystem::path& dir);

// Creates `dir` (and parents) if missing; throws layoutx::Error naming it if that fails or if it
// exists and is not a writable folder. For working and staging folders, not for outputs.
void ensure_directory(const std::filesystem::path& dir);

// The folder that holds `p`: its parent, or "." for a bare file name (where an output and its
// temporary or staging sibling are made).
std::filesystem::path folder_of(const std::filesystem::path& p);

// What a file-system node is, in words, for a message: "a character device", "a FIFO" ...
std::string node_kind(const std::filesystem::path& p);

}  // namespace layoutx
