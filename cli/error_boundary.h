// The one error boundary of layoutx: every exception becomes "layoutx: error: ..." on stderr and
// exit status 2; nothing aborts. Used by main() and reusable by any other entry point (e.g. a
// Python module) that runs layoutx code.
#pragma once
#include <functional>

namespace layoutx::cli {

// Runs `body` and returns its status; on an exception prints "layoutx: error: <what>" to stderr
// and returns 2 (layoutx::Interrupted, support/progress.h: kInterruptedStatus, 130). layoutx::Error carries the file/line/key itself; the others (std::bad_alloc,
// YAML::Exception, std::filesystem_error, other std::exception, anything else) are last resorts:
// library code wraps third-party exceptions where they arise, so reaching one here is a bug
// worth reporting, and the message says what kind it was.
int run_guarded(const std::function<int()>& body);

}  // namespace layoutx::cli
