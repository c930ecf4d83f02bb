// The flags of the verbs that query an existing measurement database (regress, report): --db, and
// the --device / --model filters. One definition, so both verbs spell, default and check them alike.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "db/sqlite.h"

namespace layoutx::cli {

struct DbQueryFlags {
  std::string db;      // --db FILE|URI; "" = the default database ($XDG_DATA_HOME/layoutx/layoutx.db)
  std::string device;  // --device NAME; "" = every device
  std::string model;   // --model NAME; "" = every model

  // Registers --db, --device, --model on a verb.
  void add_to(CLI::App& verb);
  // Opens the existing database (read-only unless `for_writing`) and refuses a --device or --model
  // it has no measurements of: a mistyped name is an error, not an empty answer. Throws Error.
  std::unique_ptr<db::Connection> open(bool for_writing = false) const;
};

}  // namespace layoutx::cli
