#!/usr/bin/env bash
# Runs the trading tests that reach what a larger deployment puts in front of the service
# differently (the list below says what each proves) against a three-node Redis Cluster
# (redis-server's own cluster mode, on loopback) and PgBouncer in transaction pooling mode
# (Debian's package), both started here and stopped at the end. CI runs it after the main
# suite; run it by hand with `bash scripts/cluster-check.sh` (needs redis-server and pgbouncer
# on PATH, and Postgres on 127.0.0.1:5432 as for npm test); extra arguments go to jest.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
chmod 755 "$work"
# Each Redis Cluster node also binds a bus port, its own port plus 10000. All seven ports
# (three nodes, three buses, PgBouncer) stay below Linux's ephemeral range (32768 and up),
# where an outgoing connection's local port could take one of ours between the check and
# the bind, and nobody may listen on any of them.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ports_free() {
  local b=$1
  for p in "$b" "$((b + 1))" "$((b + 2))" "$((b + 3))" "$((b + 10000))" "$((b + 10001))" "$((b + 10002))"; do
    port_free "$p" || return 1
  done
}
for _ in $(seq 1 50); do
  base=$((12000 + RANDOM % 10000))
  ports_free "$base" && break
done
ports=("$base" "$((base + 1))" "$((base + 2))")
bouncer_port=$((base + 3))
pids=()

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -f "$work/pgbouncer.pid" ]; then kill "$(cat "$work/pgbouncer.pid")" 2>/dev/null || true; fi
  sleep 0.5
  rm -rf "$work"
}
trap cleanup EXIT

echo "== Redis Cluster on ports ${ports[*]}"
for port in "${ports[@]}"; do
  redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file "$work/nodes-$port.conf" \
    --cluster-node-timeout 5000 --dir "$work" --save "" --appendonly no --logfile "$work/redis-$port.log" &
  pids+=("$!")
done
for port in "${ports[@]}"; do
  for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  if ! redis-cli -p "$port" ping >/dev/null 2>&1; then
    echo "redis-server on port $port did not start; its log:" >&2
    cat "$work/redis-$port.log" >&2 || true
    exit 1
  fi
done
redis-cli --cluster create "127.0.0.1:${ports[0]}" "127.0.0.1:${ports[1]}" "127.0.0.1:${ports[2]}" \
  --cluster-replicas 0 --cluster-yes >/dev/null
for _ in $(seq 1 100); do
  redis-cli -p "${ports[0]}" cluster info | grep -q 'cluster_state:ok' && break
  sleep 0.1
done
redis-cli -p "${ports[0]}" cluster info | grep cluster_state

echo "== PgBouncer (transaction pooling) on port $bouncer_port"
cat >"$work/users.txt" <<EOF
"postgres" ""
EOF
cat >"$work/pgbouncer.ini" <<EOF
[databases]
* = host=127.0.0.1 port=5432
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
unix_socket_dir =
auth_type = trust
auth_file = $work/users.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
max_db_connections = 40
ignore_startup_parameters = extra_float_digits,options
logfile = $work/pgbouncer.log
pidfile = $work/pgbouncer.pid
EOF
chmod 644 "$work/pgbouncer.ini" "$work/users.txt"
# PgBouncer refuses to run as root: -u drops to the postgres user, which must write its log there.
if [ "$(id -u)" = "0" ]; then
  chown postgres "$work"
  pgbouncer -d -u postgres "$work/pgbouncer.ini"
else
  pgbouncer -d "$work/pgbouncer.ini"
fi
for _ in $(seq 1 50); do
  psql -h 127.0.0.1 -p "$bouncer_port" -U postgres -d postgres -Atc 'select 1' >/dev/null 2>&1 && break
  sleep 0.1
done
psql -h 127.0.0.1 -p "$bouncer_port" -U postgres -d postgres -Atc "select 'pgbouncer answers'"

# The other trading files (validation, pricing, the ledger's sums, account views) send the same
# kinds of Redis commands and statements as these, through the same modules: the main suite
# runs them, and running them here again would prove nothing more about the cluster or the pooler.
tests=(
  # The service's own Redis keys under one hash-tagged prefix (sessions, login throttles, quotes),
  # and the money paths' row locks, transactions and idempotency keys through the pooler.
  test/integration/trading/market-orders.test.ts
  test/integration/trading/idempotency.test.ts
  test/integration/trading/order-idempotency.test.ts
  # BullMQ in the cluster: a flow of jobs, the API waiting on QueueEvents, the worker's
  # schedulers, jobs queued by an API-only process and run by a worker later, a job that fails.
  test/integration/trading/bulk-close.test.ts
  test/integration/trading/run-failures.test.ts
  test/integration/trading/expiry.test.ts
  # The engine's tick book (the quote and its change counter in one MULTI), its lease and the quote store.
  test/integration/trading/engine-tick-job.test.ts
  test/integration/trading/engine-pending.test.ts
  test/integration/trading/limit-price.test.ts
  # Events written in the business transaction through the pooler, and a failed write rolling it back.
  test/integration/trading/domain-events.test.ts
  # Worker processes of their own, started with the cluster and the pooler, killed mid-run.
  test/integration/trading/engine-fault.test.ts
  test/integration/trading/bulk-close-fault.test.ts
)
echo "== ${#tests[@]} trading test files through both"
TEST_REDIS_URL="redis://127.0.0.1:${ports[0]},redis://127.0.0.1:${ports[1]},redis://127.0.0.1:${ports[2]}" \
TEST_REDIS_CLUSTER=true \
TEST_DATABASE_APP_URL="postgres://postgres@127.0.0.1:$bouncer_port/postgres" \
  npx jest "${tests[@]}" "$@"
