#include "cli/db_flags.h"

#include "db/known_names.h"
#include "db/schema.h"

namespace layoutx::cli {

void DbQueryFlags::add_to(CLI::App& verb) {
  verb.add_option("--db", db, "existing database file, opened read-only (default: $XDG_DATA_HOME/layoutx/layoutx.db)");
  verb.add_option("--device", device, "only this device (default: every device)");
  verb.add_option("--model", model, "only this model (default: every model)");
}

std::unique_ptr<db::Connection> DbQueryFlags::open(bool for_writing) const {
  auto conn = for_writing ? db::open_existing_database(db) : db::open_database_readonly(db);
  db::require_known(*conn, device, model);
  return conn;
}

}  // namespace layoutx::cli
