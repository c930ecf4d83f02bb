// layoutx: the executable only runs the app (cli/app.h); each verb reads as the pipeline it runs.
// Exit status: 0 success, 1 a verb's negative finding (e.g. regress found a regression),
// 2 an error (message on stderr naming the file, line or key, and what is wrong).
#include <iostream>

#include "cli/app.h"

int main(int argc, char** argv) {
  return layoutx::cli::run_layoutx(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
