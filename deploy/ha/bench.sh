#!/usr/bin/env bash
# `chipledger bench` with synchronous replication on and on a single node, in one run on one
# machine: the HA stack of this directory (chipledgerd through HAProxy's primary port) and a lone
# chipledger/postgres:15 container, each behind its own chipledgerd (development mode: loopback,
# no TLS, anonymous admin), benched one after the other with the same arguments. Both reports
# are printed and kept under $out (default /tmp/chipledger-ha-bench).
#
# Usage: deploy/ha/bench.sh [BENCH ARGS...]   (default: --tables 1 --modes live,batch
#        --rates 100 --paced-tables 1 --hands 100 --core-seconds 1: one table; see docs/BENCHMARKS.md
#        for why not more on a loaded 2-core machine)
# Needs: both images (deploy/postgres-image/build.sh, deploy/ha/build.sh), compose, and the
# binaries: CHIPLEDGERD and CHIPLEDGER (default target/release/chipledgerd, target/release/chipledger).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
chipledgerd="${CHIPLEDGERD:-$repo/target/release/chipledgerd}"
chipledger="${CHIPLEDGER:-$repo/target/release/chipledger}"
out="${out:-/tmp/chipledger-ha-bench}"
if [ $# -eq 0 ]; then
    set -- --tables 1 --modes live,batch --rates 100 --paced-tables 1 --hands 100 --core-seconds 1
fi
if docker compose version >/dev/null 2>&1; then compose=(docker compose); else compose=(docker-compose); fi
project="chipledger-ha-bench-$$"
compose+=(-f "$repo/deploy/ha/compose.yaml" -p "$project")
single="chipledger-single-bench-$$"
rm -rf "$out"
mkdir -p "$out"

secret() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }
export PATRONI_SUPERUSER_PASSWORD="$(secret)" PATRONI_REPLICATION_PASSWORD="$(secret)" CHIPLEDGER_ADMIN_PASSWORD="$(secret)"
export CHIPLEDGER_HA_PRIMARY_PUBLISH=127.0.0.1: CHIPLEDGER_HA_REPLICA_PUBLISH=127.0.0.1:
single_password="$(secret)"
secret >"$out/app.password"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    "${compose[@]}" down -v -t 0 >/dev/null 2>&1 || true
    docker rm -f -v "$single" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# Polls `$@` once a second until it succeeds, at most $1 seconds.
wait_for() {
    local bound="$1" started=$SECONDS
    shift
    until "$@" >/dev/null 2>&1; do
        [ $((SECONDS - started)) -lt "$bound" ] || { echo "not ready after ${bound}s: $*" >&2; return 1; }
        sleep 1
    done
}
ha_ready() {
    "${compose[@]}" exec -T pg1 patronictl -c /etc/patroni/patroni.yml list -f json |
        python3 -c 'import json,sys; m=json.load(sys.stdin); r=[x["Role"] for x in m if x["State"] in ("running","streaming")]; sys.exit(0 if sorted(r)==["Leader","Replica","Sync Standby"] else 1)'
}
sql_answers() { PGPASSWORD="$2" psql -h 127.0.0.1 -p "$1" -U chipledger -d chipledger -qtAc 'SELECT 1'; }

echo "== starting the HA stack ($project) and a single node ($single)"
"${compose[@]}" up -d >/dev/null 2>&1
docker run -d --name "$single" -p 127.0.0.1::5432 -e POSTGRES_USER=chipledger -e POSTGRES_DB=chipledger \
    -e POSTGRES_PASSWORD="$single_password" chipledger/postgres:15 >/dev/null
wait_for 240 ha_ready
ha_port="$("${compose[@]}" port haproxy 5000 | sed 's/.*://')"
single_port="$(docker port "$single" 5432/tcp | head -n 1 | sed 's/.*://')"
wait_for 240 sql_answers "$ha_port" "$CHIPLEDGER_ADMIN_PASSWORD"
wait_for 120 sql_answers "$single_port" "$single_password"

# chipledgerd on a database: the admin step, then the service as the application role.
serve() {
    local name="$1" port="$2" password="$3" listen="$4"
    local admin="postgres://chipledger:${password}@127.0.0.1:${port}/chipledger"
    "$chipledgerd" migrate --app-password-file "$out/app.password" --database-url "$admin" >"$out/$name-migrate.log" 2>&1
    mkdir -p "$out/$name-data"
    DATABASE_URL="postgres://chipledger_app:$(cat "$out/app.password")@127.0.0.1:${port}/chipledger" \
        CHIPLEDGER_DATA_DIR="$out/$name-data" CHIPLEDGER_LISTEN="$listen" RUST_LOG=warn \
        "$chipledgerd" >"$out/$name-chipledgerd.log" 2>&1 &
    pids+=("$!")
    wait_for 60 grep -q "listening on" "$out/$name-chipledgerd.log"
}
serve ha "$ha_port" "$CHIPLEDGER_ADMIN_PASSWORD" 127.0.0.1:50061
serve single "$single_port" "$single_password" 127.0.0.1:50062

echo "== settings"
PGPASSWORD="$CHIPLEDGER_ADMIN_PASSWORD" psql -h 127.0.0.1 -p "$ha_port" -U chipledger -d chipledger -qtAc \
    "SELECT 'ha: synchronous_standby_names=' || current_setting('synchronous_standby_names') || ', synchronous_commit=' || current_setting('synchronous_commit')"
PGPASSWORD="$single_password" psql -h 127.0.0.1 -p "$single_port" -U chipledger -d chipledger -qtAc \
    "SELECT 'single: synchronous_standby_names=''' || current_setting('synchronous_standby_names') || ''', synchronous_commit=' || current_setting('synchronous_commit')"

for target in ha single; do
    if [ "$target" = ha ]; then port="$ha_port" password="$CHIPLEDGER_ADMIN_PASSWORD" server=http://127.0.0.1:50061
    else port="$single_port" password="$single_password" server=http://127.0.0.1:50062; fi
    echo "== bench $target: chipledger --server $server --property default bench --database-url postgres://chipledger:***@127.0.0.1:$port/chipledger $*"
    "$chipledger" --server "$server" --property default bench --database-url "postgres://chipledger:${password}@127.0.0.1:${port}/chipledger" \
        --out "$out/$target-report.md" "$@" >"$out/$target-bench.log" 2>&1 || { tail -n 30 "$out/$target-bench.log" >&2; exit 1; }
    cat "$out/$target-report.md"
done
