#include "db/libpq.h"

#include <dlfcn.h>

#include <string>

#include "support/error.h"

namespace layoutx::db {

namespace {

constexpr const char* kLibrary = "libpq.so.5";  // Debian 12's libpq5 (a dependency of libpq-dev)

template <class F>
void resolve(void* lib, const char* name, F& out) {
  void* f = dlsym(lib, name);
  if (!f) throw Error(std::string(kLibrary) + ": no function " + name + " (" + dlerror() + ")");
  out = reinterpret_cast<F>(f);
}

LibPq load() {
  void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    throw Error(std::string("PostgreSQL: cannot load ") + kLibrary + " (" + (why ? why : "unknown error") +
                "); install Debian's libpq5 (scripts/setup does)");
  }
  LibPq p{};
  resolve(lib, "PQconnectdb", p.connectdb);
  resolve(lib, "PQstatus", p.status);
  resolve(lib, "PQerrorMessage", p.errorMessage);
  resolve(lib, "PQfinish", p.finish);
  resolve(lib, "PQsetNoticeProcessor", p.setNoticeProcessor);
  resolve(lib, "PQexec", p.exec);
  resolve(lib, "PQexecParams", p.execParams);
  resolve(lib, "PQexecPrepared", p.execPrepared);
  resolve(lib, "PQprepare", p.prepare);
  resolve(lib, "PQresultStatus", p.resultStatus);
  resolve(lib, "PQresultErrorField", p.resultErrorField);
  resolve(lib, "PQntuples", p.ntuples);
  resolve(lib, "PQnfields", p.nfields);
  resolve(lib, "PQgetisnull", p.getisnull);
  resolve(lib, "PQgetvalue", p.getvalue);
  resolve(lib, "PQgetlength", p.getlength);
  resolve(lib, "PQclear", p.clear);
  resolve(lib, "PQtransactionStatus", p.transactionStatus);
  return p;  // the library stays loaded for the process's life
}

}  // namespace

const LibPq& libpq() {
  static const LibPq p = load();  // a failed load throws and is retried on the next call
  return p;
}

}  // namespace layoutx::db
