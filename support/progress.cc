#include "support/progress.h"

#include <atomic>
#include <iostream>
#include <mutex>
#include <thread>

namespace layoutx {

namespace {

struct State {
  std::mutex mu;
  ProgressHooks hooks;
  std::thread::id owner;
  std::atomic<bool> stopped{false};
};

State& state() {
  static State s;
  return s;
}

}  // namespace

ProgressHooks set_progress_hooks(ProgressHooks hooks) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  std::swap(s.hooks, hooks);
  s.owner = std::this_thread::get_id();
  s.stopped = false;
  return hooks;
}

void progress_line(const std::string& line) {
  State& s = state();
  std::function<void(const std::string&)> sink;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    sink = s.hooks.line;
  }
  if (sink) sink(line);
  else std::cerr << line << std::endl;
}

void progress_tick() {
  State& s = state();
  if (s.stopped) throw Interrupted();
  if (std::this_thread::get_id() != s.owner || !s.hooks.tick) return;
  try {
    s.hooks.tick();
  } catch (const Interrupted&) {
    s.stopped = true;
    throw;
  }
}

}  // namespace layoutx
