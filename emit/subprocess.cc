#include "emit/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/error.h"

namespace layoutx::emit {

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  return a;
}

int decode_status(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return 255;
}

}  // namespace

Subprocess::Subprocess(const std::vector<std::string>& argv, const std::string& stderr_file) {
  if (argv.empty()) throw Error("subprocess: empty command");
  // A child that exits early must not kill us with SIGPIPE on the next write.
  signal(SIGPIPE, SIG_IGN);
  int in_pipe[2], out_pipe[2];
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0) throw Error(std::string("subprocess: pipe: ") + std::strerror(errno));
  int err_fd = open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err_fd < 0) throw Error(stderr_file + ": cannot open for the child's stderr");
  auto args = c_argv(argv);
  pid_ = fork();
  if (pid_ < 0) throw Error(std::string("subprocess: fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_fd, 2);
    close(in_pipe[0]); close(in_pipe[1]); close(out_pipe[0]); close(out_pipe[1]); close(err_fd);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_fd);
  in_fd_ = in_pipe[1];
  out_fd_ = out_pipe[0];
}

Subprocess::~Subprocess() {
  if (!waited_) wait();
}

void Subprocess::write_line(const std::string& line) {
  std::string s = line + "\n";
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(in_fd_, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("subprocess: the child closed its input");
    off += static_cast<size_t>(n);
  }
}

bool Subprocess::read_line(std::string& line) {
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    char buf[4096];
    ssize_t n = ::read(out_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (buffer_.empty()) return false;
      line.swap(buffer_);
      buffer_.clear();
      return true;
    }
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

int Subprocess::wait() {
  if (waited_) return status_;
  if (in_fd_ >= 0) close(in_fd_);
  in_fd_ = -1;
  int st = 0;
  while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  if (out_fd_ >= 0) close(out_fd_);
  out_fd_ = -1;
  waited_ = true;
  status_ = decode_status(st);
  return status_;
}

RunResult run_command(const std::vector<std::string>& argv) {
  if (argv.empty()) throw Error("subprocess: empty command");
  signal(SIGPIPE, SIG_IGN);
  char tmpl_out[] = "/tmp/layoutx_out_XXXXXX";
  char tmpl_err[] = "/tmp/layoutx_err_XXXXXX";
  int out_fd = mkstemp(tmpl_out), err_fd = mkstemp(tmpl_err);
  if (out_fd < 0 || err_fd < 0) throw Error("subprocess: cannot create temporary files");
  auto args = c_argv(argv);
  pid_t pid = fork();
  if (pid < 0) throw Error(std::string("subprocess: fork: ") + std::strerror(errno));
  if (pid == 0) {
    int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out_fd);
  close(err_fd);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  auto slurp = [](const char* p) {
    std::ifstream f(p, std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(f)), {});
    std::error_code ec;
    std::filesystem::remove(p, ec);
    if (s.size() > 65536) s.resize(65536);
    return s;
  };
  return {decode_status(st), slurp(tmpl_out), slurp(tmpl_err)};
}

}  // namespace layoutx::emit
