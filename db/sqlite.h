// Kept so existing includes build: the connection API is backend-neutral now (db/connection.h).
#pragma once
#include <sqlite3.h>

#include "db/connection.h"
