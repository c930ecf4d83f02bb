// libpq, loaded when a PostgreSQL target is first opened (dlopen of Debian's libpq.so.5), not
// linked: libpq needs about twenty more shared libraries (GnuTLS, Kerberos, LDAP, SASL, ...), and
// loading and relocating them cost every layoutx process about 10 ms at start (`predict --help`
// went from 8 to 19 ms when PostgreSQL support was linked in), whether it used a database or not.
// The header still comes from libpq-dev: the types, enums and each function's signature.
#pragma once
#include <libpq-fe.h>

namespace layoutx::db {

// The libpq functions the backend calls, each with the signature libpq-fe.h declares.
struct LibPq {
  decltype(&::PQconnectdb) connectdb;
  decltype(&::PQstatus) status;
  decltype(&::PQerrorMessage) errorMessage;
  decltype(&::PQfinish) finish;
  decltype(&::PQsetNoticeProcessor) setNoticeProcessor;
  decltype(&::PQexec) exec;
  decltype(&::PQexecParams) execParams;
  decltype(&::PQexecPrepared) execPrepared;
  decltype(&::PQprepare) prepare;
  decltype(&::PQresultStatus) resultStatus;
  decltype(&::PQresultErrorField) resultErrorField;
  decltype(&::PQntuples) ntuples;
  decltype(&::PQnfields) nfields;
  decltype(&::PQgetisnull) getisnull;
  decltype(&::PQgetvalue) getvalue;
  decltype(&::PQgetlength) getlength;
  decltype(&::PQclear) clear;
  decltype(&::PQtransactionStatus) transactionStatus;
};

// Loads libpq once (thread-safe) and returns its functions. Throws Error naming the library and
// the loader's message when it or one of its functions is missing.
const LibPq& libpq();

}  // namespace layoutx::db
