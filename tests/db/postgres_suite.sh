#!/usr/bin/env bash
# The database suite against a real PostgreSQL server: initdb a throwaway cluster in a temp folder,
# pg_ctl it on a Unix socket there (no TCP) as an unprivileged user (PostgreSQL refuses root; as
# root a system user layoutx-pg is created once), then
#   1. the db tests (ingest, idempotence, malformed files, concurrency, regress, report) on PostgreSQL;
#   2. the same ingest / regress / report session on SQLite and on PostgreSQL, outputs diffed;
#   3. N processes x R rows into one database: every row there (rows expected vs found);
#   4. kill -9 in the middle of an ingest: no partial run;
#   5. report --html from PostgreSQL;
# and always stops the server and removes the folder, pass or fail.
# Usage: postgres_suite.sh DB_TESTS LAYOUTX CONFIG_DIR FIXTURES_DIR
# Env: LAYOUTX_PG_PROCS (8), LAYOUTX_PG_ROWS (2000 rows per process; the big run uses 50000),
#      LAYOUTX_PG_BENCH=INGEST_BENCH also runs the ingest benchmark on both backends.
# Exit 0 pass, 1 fail, 77 skipped (no PostgreSQL server binaries, not under CI).
set -euo pipefail
DB_TESTS=$1 LAYOUTX=$2 CONFIGS=$3 FIXTURES=$4
PROCS=${LAYOUTX_PG_PROCS:-8} ROWS=${LAYOUTX_PG_ROWS:-2000}

bindir=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
if [ ! -x "$bindir/initdb" ] || [ ! -x "$bindir/pg_ctl" ]; then
  if [ -n "${CI:-}" ]; then echo "FAIL: no PostgreSQL server binaries under CI (scripts/setup installs postgresql-15)"; exit 1; fi
  echo "SKIP: no PostgreSQL server binaries (Debian's postgresql-15)"; exit 77
fi
tmp=$(mktemp -d /tmp/layoutx_pg_XXXXXX)
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u layoutx-pg -- "$@"; else "$@"; fi; }
if [ "$(id -u)" -eq 0 ]; then
  id layoutx-pg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin layoutx-pg
  chown layoutx-pg "$tmp"
fi
chmod 755 "$tmp"
cleanup() {
  as_pg "$bindir/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM  # so a killed run still stops the server and removes the folder

# The cluster: C collation (text sorts as in SQLite), trust on the socket only, no TCP.
as_pg "$bindir/initdb" -D "$tmp/data" --no-locale -E UTF8 -A trust -U layoutx >"$tmp/initdb.log" 2>&1 ||
  { cat "$tmp/initdb.log"; exit 1; }
as_pg "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w \
  -o "-k $tmp -c listen_addresses= -c max_connections=40" start >/dev/null || { cat "$tmp/server.log"; exit 1; }
admin="postgresql://layoutx@/postgres?host=$tmp"
psql_at() { psql "postgresql://layoutx@/$1?host=$tmp" -Atqc "$2"; }
newdb() { psql "$admin" -qc "CREATE DATABASE $1" >/dev/null; echo "postgresql://layoutx@/$1?host=$tmp"; }
fail=0
step() { echo; echo "== $*"; }

step "1. db tests on PostgreSQL"
LAYOUTX_TEST_PG=$admin "$DB_TESTS" --gtest_brief=1 \
  --gtest_filter='Ingest.*:Regress.*:Report.*:IngestChecks.*:CalibrationRecords.*' || fail=1

step "2. one session on SQLite and on PostgreSQL, outputs diffed"
pg=$(newdb session) lite="$tmp/session.db"
session() {  # $1 = --db target
  "$LAYOUTX" ingest "$CONFIGS/calibration/spark-s25-measurements.yaml" --device galaxy-s25 --db "$1" >/dev/null
  "$LAYOUTX" regress --record-predictions --db "$1" >/dev/null
  "$LAYOUTX" ingest "$FIXTURES/ours_roll.csv" "$FIXTURES/ours_roll_later.csv" "$FIXTURES/ours_roll_regressed.csv" \
    --device galaxy-s25 --db "$1" >/dev/null
  "$LAYOUTX" calibrate --no-save --db "$1" | tail -n +1 | grep -v "stored in database" || true
  "$LAYOUTX" regress --db "$1" --json || true
  "$LAYOUTX" regress --db "$1" || true
  "$LAYOUTX" report --db "$1" --json
  "$LAYOUTX" report --db "$1"
}
session "$lite" 2>&1 | sed "s#$lite#DB#g" >"$tmp/sqlite.out"
session "$pg" 2>&1 | sed "s#$pg#DB#g" >"$tmp/pg.out"
# Dates differ between the two sessions (they ran at different seconds); nothing else may.
dates='s/20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9:]*Z/DATE/g'
if diff <(sed "$dates" "$tmp/sqlite.out") <(sed "$dates" "$tmp/pg.out"); then
  echo "identical ($(wc -l <"$tmp/pg.out") lines of ingest/calibrate/regress/report output)"
else
  echo "FAIL: the outputs differ"; fail=1
fi

step "3. $PROCS processes x $ROWS rows into one PostgreSQL database"
pg=$(newdb concurrent)
"$LAYOUTX" ingest "$FIXTURES/ours_roll.csv" --device galaxy-s25 --db "$pg" >/dev/null  # schema in place
for p in $(seq 1 "$PROCS"); do
  awk -v p="$p" -v n="$ROWS" 'BEGIN { print "layer,ctx,variant,precision,ms"; for (i = 0; i < n; i++) printf "full,4096,ring,fp16,%.6f\n", 2 + p / 1000 + i / 1e7 }' >"$tmp/c$p.csv"
done
start=$(date +%s.%N)
pids=()
for p in $(seq 1 "$PROCS"); do "$LAYOUTX" ingest "$tmp/c$p.csv" --device galaxy-s25 --db "$pg" >"$tmp/c$p.log" 2>&1 & pids+=($!); done
for pid in "${pids[@]}"; do wait "$pid" || { echo "FAIL: an ingest failed"; fail=1; }; done
secs=$(echo "$(date +%s.%N) - $start" | bc)
expected=$((PROCS * ROWS + 3)) found=$(psql_at concurrent "SELECT count(*) FROM layer_measurements")
runs=$(psql_at concurrent "SELECT count(*) FROM measurement_runs")
echo "rows expected $expected, found $found; runs expected $((PROCS + 1)), found $runs; ${secs}s"
[ "$found" = "$expected" ] && [ "$runs" = "$((PROCS + 1))" ] || { echo "FAIL: rows lost or duplicated"; fail=1; }
# The same files again, all at once: every one skipped, nothing added.
pids=()
for p in $(seq 1 "$PROCS"); do "$LAYOUTX" ingest "$tmp/c$p.csv" --device galaxy-s25 --db "$pg" >"$tmp/again$p.log" 2>&1 & pids+=($!); done
for pid in "${pids[@]}"; do wait "$pid" || fail=1; done
again=$(psql_at concurrent "SELECT count(*) FROM layer_measurements")
skipped=$(cat "$tmp"/again*.log | grep -c "^skipped" || true)
echo "re-ingest of the same $PROCS files: $skipped skipped, rows $again"
[ "$again" = "$expected" ] && [ "$skipped" = "$PROCS" ] || { echo "FAIL: re-ingest was not idempotent"; fail=1; }

step "4. kill -9 in the middle of an ingest"
big=$((ROWS * 25))
awk -v n="$big" 'BEGIN { print "layer,ctx,variant,precision,ms"; for (i = 0; i < n; i++) printf "full,4096,ring,w8a16,%.6f\n", 1.6 + i / 1e8 }' >"$tmp/big.csv"
before=$(psql_at concurrent "SELECT count(*) FROM layer_measurements")
"$LAYOUTX" ingest "$tmp/big.csv" --device galaxy-s25 --db "$pg" >/dev/null 2>&1 &
victim=$!
# Wait until its transaction has written rows (visible to the server, not yet committed), then kill.
for _ in $(seq 1 200); do
  busy=$(psql_at concurrent "SELECT count(*) FROM pg_stat_activity WHERE datname = 'concurrent' AND pid <> pg_backend_pid() AND (state = 'idle in transaction' OR query LIKE 'INSERT INTO layer%')")
  [ "$busy" != "0" ] && break
  sleep 0.02
done
kill -9 "$victim" 2>/dev/null || true
rc=0
wait "$victim" 2>/dev/null || rc=$?
if [ "$rc" = 137 ]; then echo "killed ingest $victim (SIGKILL) in its transaction"; else echo "FAIL: the ingest was not killed mid-way (exit $rc)"; fail=1; fi
sleep 0.5  # the server notices the closed socket and rolls the transaction back
after=$(psql_at concurrent "SELECT count(*) FROM layer_measurements")
partial=$(psql_at concurrent "SELECT count(*) FROM measurement_runs r WHERE source_path LIKE '%big.csv'")
echo "rows before $before, after $after; runs of the killed file: $partial"
[ "$after" = "$before" ] && [ "$partial" = "0" ] || { echo "FAIL: a partial run is left"; fail=1; }
"$LAYOUTX" ingest "$tmp/big.csv" --device galaxy-s25 --db "$pg" >/dev/null
final=$(psql_at concurrent "SELECT count(*) FROM layer_measurements")
echo "ingested again after the kill: rows $final (expected $((before + big)))"
[ "$final" = "$((before + big))" ] || fail=1

step "5. report --html from PostgreSQL"
"$LAYOUTX" report --db "$(echo "postgresql://layoutx@/session?host=$tmp")" --html "$tmp/html" >/dev/null &&
  grep -c '<svg class="plot"' "$tmp/html/index.html" | sed 's/^/plots: /' || fail=1

if [ -n "${LAYOUTX_PG_BENCH:-}" ]; then
  step "ingest benchmark, SQLite and PostgreSQL"
  LAYOUTX_BENCH_PG=$(newdb bench) "$LAYOUTX_PG_BENCH" --benchmark_filter=Ingest --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true || fail=1
fi
echo
[ "$fail" = 0 ] && echo "postgres suite: pass" || echo "postgres suite: FAIL"
exit "$fail"
