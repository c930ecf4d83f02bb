// The verbs' output flags (--out, --plot, --html, --db of the verbs that write a database),
// checked by CLI11 when the flag is parsed, so before any work, by the one output rule
// (support/output_target.h). Messages read "--out: /dev/full: is a character device, not a
// regular file ..." or "--out: the path is empty; give a file name".
#pragma once
#include <CLI/CLI.hpp>

#include <string>

namespace layoutx::cli {

// A file the verb writes (select --out, calibrate --out, step/regress --plot).
CLI::Validator output_file();
// A folder the verb writes whole (emit/next --out, report --html): what can be checked before
// --force is known; the verb's StagedFolder checks emptiness.
CLI::Validator output_folder();
// A database the verb creates or adds to (ingest/measure --db): a SQLite file under the file
// rule (its folder must exist: only the default database's folder is created), or a PostgreSQL URI.
CLI::Validator output_database();

// The --force flag of the folder outputs: replace a non-empty folder's contents.
CLI::Option* add_force_flag(CLI::App& app, bool& force, const std::string& flag);

}  // namespace layoutx::cli
