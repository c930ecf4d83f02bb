#include "support/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

#include "support/error.h"

namespace layoutx {
namespace fs = std::filesystem;

namespace {

std::string describe_errno(int e) { return std::strerror(e); }

fs::path folder_of(const fs::path& target) {
  fs::path dir = target.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

// Writes all of `data` to `fd`, retrying short writes and EINTR.
bool write_all(int fd, std::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

// The mode a new file or folder gets from `full` (0666, 0777) under the process umask: mkstemp and
// mkdtemp create 0600 / 0700, but a published output should look like any other output.
mode_t umasked(mode_t full) {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return full & ~mask;
}

}  // namespace

void check_file_target(const fs::path& target) {
  if (target.empty()) throw Error("output path is empty");
  std::error_code ec;
  if (target.filename().empty() || fs::is_directory(target, ec))
    throw Error(target.string() + ": is a folder; give a file name");
  fs::path dir = folder_of(target);
  if (!fs::exists(dir, ec)) throw Error(target.string() + ": folder " + dir.string() + " does not exist");
  if (!fs::is_directory(dir, ec)) throw Error(target.string() + ": " + dir.string() + " is not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error(target.string() + ": folder " + dir.string() + " is not writable (" + describe_errno(errno) + ")");
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
  if (!fs::is_directory(p, ec))
    throw Error(dir.string() + ": " + p.string() + " exists and is not a folder");
  if (::access(p.c_str(), W_OK | X_OK) != 0)
    throw Error(dir.string() + ": folder " + p.string() + " is not writable (" + describe_errno(errno) + ")");
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
    throw Error(dir.string() + ": folder is not writable (" + describe_errno(errno) + ")");
}

void write_file_atomically(const fs::path& target, std::string_view contents) {
  check_file_target(target);
  std::string pattern = (folder_of(target) / ("." + target.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(pattern.data());
  if (fd < 0) throw Error(target.string() + ": cannot create a temporary file (" + describe_errno(errno) + ")");
  const std::string tmp = pattern;
  auto fail = [&](const std::string& what) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(target.string() + ": " + what + " (" + describe_errno(e) + ")");
  };
  if (!write_all(fd, contents)) fail("write failed");
  if (::fchmod(fd, umasked(0666)) != 0) fail("cannot set file mode");
  if (::fsync(fd) != 0) fail("fsync failed");
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw Error(target.string() + ": close failed (" + describe_errno(e) + ")");
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw Error(target.string() + ": cannot replace the file (" + describe_errno(e) + ")");
  }
}

StagedFolder::StagedFolder(fs::path target) : target_(std::move(target)) {
  if (!target_.has_filename()) target_ = target_.parent_path();  // "DIR/" names DIR
  if (target_.empty()) throw Error("output folder is empty");
  std::error_code ec;
  if (fs::exists(target_, ec)) {
    if (!fs::is_directory(target_, ec)) throw Error(target_.string() + ": exists and is not a folder");
    if (!fs::is_empty(target_, ec)) throw Error(target_.string() + ": folder exists and is not empty");
  } else {
    check_file_target(target_);  // its parent exists and is writable
  }
  std::string pattern = (folder_of(target_) / ("." + target_.filename().string() + ".XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    throw Error(target_.string() + ": cannot create a staging folder (" + describe_errno(errno) + ")");
  staging_ = pattern;
}

StagedFolder::~StagedFolder() {
  if (published_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

void StagedFolder::publish() {
  std::error_code ec;
  if (fs::exists(target_, ec)) fs::remove(target_, ec);  // an empty folder (checked when staged)
  ::chmod(staging_.c_str(), umasked(0777));
  if (::rename(staging_.c_str(), target_.c_str()) != 0)
    throw Error(target_.string() + ": cannot publish the folder (" + describe_errno(errno) + ")");
  published_ = true;
}

}  // namespace layoutx
