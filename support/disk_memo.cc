#include "support/disk_memo.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/atomic_file.h"
#include "support/hash.h"

namespace layoutx {

namespace {

constexpr std::string_view kHeader = "layoutx memo 1";

bool one_line(std::string_view s) { return s.find('\n') == std::string_view::npos; }

}  // namespace

DiskMemo::DiskMemo(std::optional<std::filesystem::path> folder, std::string code_stamp)
    : folder_(code_stamp.empty() ? std::nullopt : std::move(folder)), stamp_(std::move(code_stamp)) {}

// Named by the key alone, so a new build overwrites its predecessor's file for the same key
// instead of adding one: the folder holds at most one file per key ever asked.
std::filesystem::path DiskMemo::file_for(std::string_view key) const {
  return *folder_ / (hex(fnv1a(key), 16) + ".memo");
}

std::optional<std::string> DiskMemo::get(std::string_view key) const {
  if (!folder_ || !one_line(key)) return std::nullopt;
  std::ifstream in(file_for(key), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return std::nullopt;
  // Exactly what put writes: header, stamp, key, value, "end", each ended by a newline.
  const std::string prefix = std::string(kHeader) + '\n' + stamp_ + '\n' + std::string(key) + '\n';
  const std::string s = text.str();
  if (s.size() < prefix.size() + 5 || s.compare(0, prefix.size(), prefix) != 0 || !s.ends_with("\nend\n"))
    return std::nullopt;
  std::string value = s.substr(prefix.size(), s.size() - prefix.size() - 5);
  if (!one_line(value)) return std::nullopt;
  return value;
}

void DiskMemo::put(std::string_view key, std::string_view value) const {
  if (!folder_ || !one_line(key) || !one_line(value)) return;
  std::ostringstream text;
  text << kHeader << '\n' << stamp_ << '\n' << key << '\n' << value << "\nend\n";
  try {
    ensure_directory(*folder_);
    write_file_atomically(file_for(key), text.str());
  } catch (...) {
    // A read-only or full cache folder costs the next run its time, nothing else.
  }
}

std::optional<std::filesystem::path> user_cache_folder(std::string_view name) {
  if (const char* d = std::getenv("LAYOUTX_CACHE_DIR")) {
    if (!*d) return std::nullopt;
    return std::filesystem::path(d) / name;
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "layoutx" / name;
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "layoutx" / name;
  return std::nullopt;
}

std::string code_stamp() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<const void*>(&code_stamp), &info) || !info.dli_fname || !*info.dli_fname) return "";
  std::error_code ec;
  // dli_fname may be a bare name (the main program found on PATH): /proc/self/exe then.
  std::filesystem::path file = info.dli_fname;
  if (file.is_relative()) file = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || file.empty()) return "";
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return "";
  std::ostringstream s;
  s << file.string() << ' ' << st.st_size << ' ' << st.st_mtim.tv_sec << '.' << st.st_mtim.tv_nsec << ' '
    << cpu_stamp();
  return s.str();
}

std::string cpu_stamp() {
  // glibc's libm picks its exp/log/erf variants by these CPU features (ifuncs), so a home folder
  // shared by two machines must not mix their figures.
  __builtin_cpu_init();
  return std::string("fma ") + (__builtin_cpu_supports("fma") ? "1" : "0") + " avx2 " +
         (__builtin_cpu_supports("avx2") ? "1" : "0");
}

}  // namespace layoutx
