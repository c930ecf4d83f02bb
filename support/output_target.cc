#include "support/output_target.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/error.h"

namespace layoutx {
namespace fs = std::filesystem;

namespace {

std::string with_flag(std::string_view flag, const std::string& text) {
  return flag.empty() ? text : std::string(flag) + ": " + text;
}

std::string kind_of(mode_t m) {
  if (S_ISREG(m)) return "a regular file";
  if (S_ISDIR(m)) return "a folder";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISSOCK(m)) return "a socket";
  return "a special file";
}

// Where a chain of symbolic links that ends in nothing yet (a dangling link) points: writing
// through the link creates that path. `p` itself when it is no link.
fs::path final_link_target(const fs::path& start) {
  fs::path p = start;
  for (int hop = 0; hop < 40; ++hop) {  // 40: the kernel's own limit on links followed (ELOOP)
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::error_code ec;
    fs::path next = fs::read_symlink(p, ec);
    if (ec) return p;  // the folder checks that follow name what is wrong
    p = next.is_absolute() ? next : folder_of(p) / next;
  }
  return p;
}

// `shown` names the target (and the flag) in messages; `written` is the path actually replaced.
std::string shown_as(const std::string& shown, const fs::path& target, const fs::path& written) {
  return written == target ? shown : shown + " (a symbolic link to " + written.string() + ")";
}

// The folder that will hold `written` exists, is a folder and is writable (never created here).
void check_parent(const std::string& shown, const fs::path& written) {
  const fs::path dir = folder_of(written);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw Error(shown + ": folder " + dir.string() + " does not exist");
    throw Error(shown + ": cannot check folder " + dir.string() + " (" + std::strerror(errno) + ")");
  }
  if (!S_ISDIR(st.st_mode)) throw Error(shown + ": " + dir.string() + " exists and is not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error(shown + ": folder " + dir.string() + " is not writable (" + std::strerror(errno) + ")");
}

// stat() of `target` (symbolic links followed): true if it exists; false if it does not (or a
// link dangles); throws for anything else (a loop of links, no permission to look).
bool stat_target(const fs::path& target, const std::string& shown, struct stat& st) {
  if (::stat(target.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  throw Error(shown + ": cannot check the target (" + std::strerror(errno) + ")");
}

fs::path canonical_or_throw(const fs::path& target, const std::string& shown) {
  std::error_code ec;
  fs::path p = fs::canonical(target, ec);
  if (ec) throw Error(shown + ": cannot resolve the path (" + ec.message() + ")");
  return p;
}

}  // namespace

fs::path folder_of(const fs::path& p) {
  fs::path dir = p.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

std::string node_kind(const fs::path& p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) return "nothing";
  if (S_ISLNK(st.st_mode)) return "a symbolic link";
  return kind_of(st.st_mode);
}

fs::path check_file_target(const fs::path& target, std::string_view flag) {
  if (target.empty()) throw Error(with_flag(flag, "the path is empty; give a file name"));
  const std::string shown = with_flag(flag, target.string());
  struct stat st;
  fs::path written;
  if (stat_target(target, shown, st)) {
    if (S_ISDIR(st.st_mode)) throw Error(shown + ": is a folder; give a file name");
    if (!S_ISREG(st.st_mode))
      throw Error(shown + ": is " + kind_of(st.st_mode) +
                  ", not a regular file; layoutx writes an output by renaming a new file over it, which would "
                  "replace the node (give the path of a file)");
    written = canonical_or_throw(target, shown);
  } else {
    if (!target.has_filename()) throw Error(shown + ": is a folder; give a file name");
    written = final_link_target(target);
  }
  check_parent(shown_as(shown, target, written), written);
  return written;
}

fs::path check_folder_target(const fs::path& target_in, bool replace, std::string_view flag) {
  if (target_in.empty()) throw Error(with_flag(flag, "the path is empty; give a folder"));
  const fs::path target = target_in.has_filename() ? target_in : target_in.parent_path();  // "DIR/" names DIR
  const std::string shown = with_flag(flag, target.string());
  struct stat st;
  fs::path written;
  if (stat_target(target, shown, st)) {
    if (S_ISREG(st.st_mode)) throw Error(shown + ": exists and is not a folder");
    if (!S_ISDIR(st.st_mode))
      throw Error(shown + ": is " + kind_of(st.st_mode) + ", not a folder; give the path of a new or empty folder");
    written = canonical_or_throw(target, shown);
    std::error_code ec;
    if (!replace && !fs::is_empty(written, ec))
      throw Error(shown + ": folder exists and is not empty (give --force to replace its contents)");
  } else {
    written = final_link_target(target);
  }
  check_parent(shown_as(shown, target, written), written);
  return written;
}

void check_directory_target(const fs::path& dir) {
  if (dir.empty()) throw Error("output folder is empty");
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot resolve the folder (" + ec.message() + ")");
  // Walk up to the nearest path that exists; it must be a folder we may write into.
  while (!fs::exists(p, ec)) {
    if (ec) throw Error(dir.string() + ": cannot check " + p.string() + " (" + ec.message() + ")");
    if (!p.has_parent_path() || p.parent_path() == p) break;
    p = p.parent_path();
  }
  if (ec) throw Error(dir.string() + ": cannot check " + p.string() + " (" + ec.message() + ")");
  if (!fs::is_directory(p, ec)) throw Error(dir.string() + ": " + p.string() + " exists and is not a folder");
  if (::access(p.c_str(), W_OK | X_OK) != 0)
    throw Error(dir.string() + ": folder " + p.string() + " is not writable (" + std::strerror(errno) + ")");
}

void ensure_directory(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw Error(dir.string() + ": exists and is not a folder");
  } else {
    fs::create_directories(dir, ec);
    if (ec) throw Error(dir.string() + ": cannot create folder (" + ec.message() + ")");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error(dir.string() + ": folder is not writable (" + std::strerror(errno) + ")");
}

}  // namespace layoutx
