// Long computations (the fidelity check) report through here: lines a user should see while
// waiting, and ticks at which the embedding program may stop them. The command line prints the
// lines on stderr and never interrupts (Ctrl-C ends the process); the Python module writes
// them to sys.stderr at once and, at a tick, raises KeyboardInterrupt when Ctrl-C was pressed.
#pragma once
#include <exception>
#include <functional>
#include <string>

namespace layoutx {

// Thrown out of progress_tick() when the embedding program asks to stop (Python: Ctrl-C). The
// error boundary does not turn it into an error message: it returns kInterruptedStatus.
class Interrupted : public std::exception {
 public:
  const char* what() const noexcept override { return "interrupted"; }
};
constexpr int kInterruptedStatus = 130;  // 128 + SIGINT, as a shell reports it

struct ProgressHooks {
  std::function<void(const std::string&)> line;  // one line, no '\n'; null: std::cerr
  std::function<void()> tick;                    // may throw Interrupted; null: never
};

// Installs `hooks` for this process and returns the previous ones. The tick is called only on
// the thread that installs the hooks (another thread's progress_tick() throws Interrupted once
// that thread's tick has thrown, so helpers stop with it).
ProgressHooks set_progress_hooks(ProgressHooks hooks);

void progress_line(const std::string& line);
void progress_tick();

}  // namespace layoutx
