#include "db/synthetic_profile.h"

namespace layoutx::db {

std::string synthetic_qnn_csv(int inferences, int ops_per_inference, uint32_t seed) {
  std::string out = "qnn-profile-viewer version: synthetic\n"
                    "Msg Timestamp, Message, Time, Unit of Measurement, Timing Source, Event Level, Event Identifier\n";
  uint32_t x = seed * 2654435761u + 1;
  auto next = [&] {  // xorshift32
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  for (int i = 0; i < inferences; ++i) {
    std::string ts = std::to_string(1000 * (i + 1));
    long long cycles_total = 0;
    std::string ops;
    for (int k = 0; k < ops_per_inference; ++k) {
      long long cyc = 500 + next() % 20000;
      cycles_total += cyc;
      ops += ts + ", EXECUTE, " + std::to_string(cyc) + ", CYCLES, BACKEND, SUB-EVENT, \"layer" + std::to_string(k / 16) +
             "/op" + std::to_string(k % 16) + ":OpId_" + std::to_string(k) + " (cycles)\"\n";
    }
    long long us = cycles_total / 1000 + 1;  // a 1 GHz clock
    out += ts + ", EXECUTE, " + std::to_string(us + 80) + ", US, NETRUN, ROOT, \"Graph 0: synthetic\"\n";
    out += ts + ", EXECUTE, " + std::to_string(us) + ", US, BACKEND, ROOT, Accelerator (execute) time\n";
    out += ts + ", EXECUTE, " + std::to_string(cycles_total) + ", CYCLES, BACKEND, ROOT, Accelerator (execute) time (cycles)\n";
    out += ops;
  }
  return out;
}

}  // namespace layoutx::db
