// A benchmark loop that runs a whole command as a new process per iteration (wall time; run the
// benchmark with UseRealTime), output to /dev/null; an exit status other than 0 fails the run.
#pragma once
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>  // environ

#include <string>
#include <vector>

namespace layoutx::bench {

inline void run_process_loop(benchmark::State& state, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
  for (auto _ : state) {
    pid_t pid;
    int status = 0;
    if (posix_spawn(&pid, argv[0], &quiet, nullptr, argv.data(), environ) != 0 || waitpid(pid, &status, 0) != pid ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError((args[0] + " did not run or exited non-zero").c_str());
      break;
    }
  }
  posix_spawn_file_actions_destroy(&quiet);
}

}  // namespace layoutx::bench
