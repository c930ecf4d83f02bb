#include "cli/error_boundary.h"

#include <yaml-cpp/exceptions.h>

#include <filesystem>
#include <iostream>
#include <new>

#include "support/error.h"
#include "support/progress.h"

namespace layoutx::cli {

namespace {
int report(const std::string& what) {
  std::cerr << "layoutx: error: " << what << "\n";
  return 2;
}
}  // namespace

int run_guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const Interrupted&) {
    // The embedding program asked to stop (Python: Ctrl-C): it raises its own exception.
    std::cerr << "layoutx: interrupted\n";
    return kInterruptedStatus;
  } catch (const Error& e) {
    return report(e.what());
  } catch (const std::bad_alloc&) {
    return report("out of memory (an input asks for more than this machine has; see README, \"Limits\")");
  } catch (const YAML::Exception& e) {
    return report("YAML: " + std::string(e.what()) + " (internal: not wrapped where it arose)");
  } catch (const std::filesystem::filesystem_error& e) {
    return report(std::string(e.what()) + " (internal: not wrapped where it arose)");
  } catch (const std::exception& e) {
    return report(std::string(e.what()) + " (internal: not wrapped where it arose)");
  } catch (...) {
    return report("unknown exception (internal)");
  }
}

}  // namespace layoutx::cli
