#include "support/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>  // renameat2, RENAME_EXCHANGE (glibc >= 2.28, _GNU_SOURCE)
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

std::string host_name() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0 || !*h) return "host";
  return h;
}

// A staging folder's name beside `target`: ".<name>.layoutx.<host>.<pid>.XXXXXX", so a later run
// can tell one a killed run of this host left (its process is gone) from one being written.
std::string stage_stem(const fs::path& target) { return "." + target.filename().string() + ".layoutx." + host_name() + "."; }

// Removes the staging folders beside `target` whose process (on this host) no longer runs.
void remove_orphaned_stages(const fs::path& target) {
  const std::string stem = stage_stem(target);
  std::error_code ec;
  for (auto it = fs::directory_iterator(folder_of(target), ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, stem.size(), stem) != 0) continue;
    const std::string rest = name.substr(stem.size());  // "<pid>.XXXXXX"
    const auto dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || rest.size() - dot - 1 != 6) continue;
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (end != rest.c_str() + dot || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive (EPERM: alive, not ours)
    std::error_code rm;
    fs::remove_all(it->path(), rm);
  }
}

}  // namespace

void write_file_atomically(const fs::path& target_in, std::string_view contents) {
  const fs::path target = check_file_target(target_in);  // a symbolic link: its final target
  std::string pattern = (folder_of(target) / ("." + target.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(pattern.data());
  if (fd < 0) throw Error(target_in.string() + ": cannot create a temporary file (" + describe_errno(errno) + ")");
  const std::string tmp = pattern;
  auto fail = [&](const std::string& what) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(target_in.string() + ": " + what + " (" + describe_errno(e) + ")");
  };
  if (!write_all(fd, contents)) fail("write failed");
  if (::fchmod(fd, umasked(0666)) != 0) fail("cannot set file mode");
  if (::fsync(fd) != 0) fail("fsync failed");
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw Error(target_in.string() + ": close failed (" + describe_errno(e) + ")");
  }
  // Checked again just before the rename: a node put there while writing is not replaced.
  struct stat st;
  if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    ::unlink(tmp.c_str());
    throw Error(target_in.string() + ": became " + node_kind(target) + " while writing; not replaced");
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw Error(target_in.string() + ": cannot replace the file (" + describe_errno(e) + ")");
  }
}

StagedFolder::StagedFolder(fs::path target, bool replace, std::string_view flag)
    : shown_((flag.empty() ? "" : std::string(flag) + ": ") + target.string()), replace_(replace) {
  target_ = check_folder_target(target, replace, flag);  // a symbolic link: its final target
  remove_orphaned_stages(target_);
  std::string pattern = (folder_of(target_) / (stage_stem(target_) + std::to_string(::getpid()) + ".XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    throw Error(shown_ + ": cannot create folder (its staging folder " + pattern + ": " + describe_errno(errno) + ")");
  staging_ = pattern;
}

StagedFolder::~StagedFolder() {
  if (published_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

void StagedFolder::publish() {
  ::chmod(staging_.c_str(), umasked(0777));
  std::error_code ec;
  struct stat st;
  if (::lstat(target_.c_str(), &st) == 0) {
    // Checked when staged; checked again, since something may have been put there meanwhile.
    if (!S_ISDIR(st.st_mode)) throw Error(shown_ + ": became " + node_kind(target_) + " while writing; nothing published");
    if (!replace_ && !fs::is_empty(target_, ec))
      throw Error(shown_ + ": something was written into the folder meanwhile; nothing published (--force replaces it)");
    // One atomic exchange: the new folder at the target, the old one (now at the staging path) removed.
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
      published_ = true;
      fs::remove_all(staging_, ec);
      return;
    }
    if (errno != EINVAL && errno != ENOSYS)
      throw Error(shown_ + ": cannot publish the folder (" + describe_errno(errno) + ")");
    fs::remove_all(target_, ec);  // a filesystem without the exchange: a moment without the folder
  }
  if (::rename(staging_.c_str(), target_.c_str()) != 0)
    throw Error(shown_ + ": cannot publish the folder (" + describe_errno(errno) + ")");
  published_ = true;
}

}  // namespace layoutx
