#!/usr/bin/env bash
# Runs the report, stream replay and event feed tests with the service reading from a real
# streaming replica, then the replica's own test, which stops it mid-run and shows the reads
# going back to the primary. The replica is a second PostgreSQL cluster on this machine, made
# here with pg_basebackup from the primary on 127.0.0.1:5432 and started on a free loopback
# port; it is stopped and deleted at the end. CI runs it after the cluster check; run it by
# hand with `bash scripts/replica-check.sh` (needs PostgreSQL's server binaries, as Debian's
# postgresql package installs them under /usr/lib/postgresql/<major>/bin).
#
# `bash scripts/replica-check.sh --run <command...>` runs the command instead of the tests,
# with the replica's URL in BENCH_REPLICA_URL and TEST_DATABASE_REPLICA_URL (the replica
# benchmark: `--run npm run bench -- replica`).
#
# What it may change on the primary, once, and says so when it does: a replication
# connection from 127.0.0.1 must be allowed by pg_hba.conf. If no rule allows it, one line,
# `host replication all 127.0.0.1/32 trust` (the primary already trusts every local TCP
# connection), is appended to the primary's pg_hba.conf and the configuration reloaded
# (`pg_reload_conf()`, no restart). wal_level must be `replica` or `logical` and
# max_wal_senders above 0 (both PostgreSQL's defaults); changing those needs a restart, so the
# script stops with a message instead.
set -euo pipefail
cd "$(dirname "$0")/.."

PRIMARY_URL=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
psql_primary() { psql "$PRIMARY_URL" -v ON_ERROR_STOP=1 -Atc "$1"; }

major=$(psql_primary 'show server_version_num')
major=$((major / 10000))
bin=/usr/lib/postgresql/$major/bin
[ -x "$bin/pg_basebackup" ] || bin=$(dirname "$(command -v pg_basebackup)")
echo "== PostgreSQL $major, binaries in $bin"

wal_level=$(psql_primary 'show wal_level')
senders=$(psql_primary 'show max_wal_senders')
if [ "$wal_level" = minimal ] || [ "$senders" -eq 0 ]; then
  echo "the primary cannot stream: wal_level=$wal_level, max_wal_senders=$senders (set wal_level=replica and max_wal_senders>0, then restart it)" >&2
  exit 1
fi

# pg_hba_file_rules reads the file as it is on disk. A rule must name `replication`: the
# catch-all `all` never matches a replication connection.
allowed=$(psql_primary "select count(*) from pg_hba_file_rules
  where type in ('host', 'hostnossl') and 'replication' = any(database) and auth_method = 'trust'
    and case when address in ('all', 'samehost', 'samenet') then true
             when netmask is not null then ('127.0.0.1'::inet & netmask::inet) = address::inet
             else false end")
if [ "$allowed" = 0 ]; then
  hba=$(psql_primary 'show hba_file')
  if [ ! -w "$hba" ]; then
    echo "the primary's $hba allows no replication connection from 127.0.0.1, and this user cannot add one:" >&2
    echo "  add 'host replication all 127.0.0.1/32 trust' to it and run: psql -c 'select pg_reload_conf()'" >&2
    exit 1
  fi
  echo "== allowing replication from 127.0.0.1: one line appended to $hba, configuration reloaded"
  printf '\n# Added by scripts/replica-check.sh: streaming replicas on this machine (CI).\nhost replication all 127.0.0.1/32 trust\n' >>"$hba"
  psql_primary 'select pg_reload_conf()' >/dev/null
fi

work=$(mktemp -d)
chmod 755 "$work"
data=$work/data
# The server refuses to run as root: as root, the cluster belongs to the postgres user.
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$work"

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for _ in $(seq 1 50); do
  port=$((20000 + RANDOM % 12000))
  port_free "$port" && break
done

# A standby needs at least the primary's value of each of these to replay its WAL.
settings=()
for name in max_connections max_worker_processes max_wal_senders max_prepared_transactions max_locks_per_transaction; do
  settings+=("-c $name=$(psql_primary "show $name")")
done
# fsync off (and pg_basebackup -N): a throwaway copy need not survive a power cut, and the
# server would otherwise sync the whole copied directory before it starts.
options="-p $port -k $work -c listen_addresses=127.0.0.1 -c hot_standby=on -c hot_standby_feedback=on -c fsync=off ${settings[*]}"

cat >"$work/ctl" <<EOF
#!/usr/bin/env bash
# start | stop [-m fast]: the replica's pg_ctl, for the test that stops it mid-run.
set -e
if [ "\$(id -u)" = 0 ]; then run=(runuser -u postgres --); else run=(); fi
exec "\${run[@]}" "$bin/pg_ctl" -D "$data" -l "$work/replica.log" -w -t 60 -o "$options" "\$@"
EOF
chmod 755 "$work/ctl"

# A replication slot keeps the primary's WAL until the replica has it: without one, a busy
# primary may recycle a segment between the end of the copy and the replica's start, and the
# replica could never catch up. It is named after this script's process and dropped at the
# end; a slot left by a run that was killed (its process gone, the slot idle) is dropped here,
# since a forgotten slot would keep WAL on the primary for ever.
slot="replica_check_$$"
for stale in $(psql_primary "select slot_name from pg_replication_slots where slot_name like 'replica\_check\_%' and not active"); do
  kill -0 "${stale#replica_check_}" 2>/dev/null || psql_primary "select pg_drop_replication_slot('$stale')" >/dev/null || true
done

cleanup() {
  local status=$?
  if [ "$status" != 0 ] && [ -f "$work/replica.log" ]; then
    echo "== the replica's log (last 40 lines)" >&2
    tail -n 40 "$work/replica.log" >&2 || true
  fi
  "$work/ctl" stop -m immediate >/dev/null 2>&1 || true
  # The primary's sender lets go of the slot a moment after the replica stops.
  for _ in $(seq 1 50); do
    [ "$(psql_primary "select count(*) from pg_replication_slots where slot_name = '$slot'")" = 0 ] && break
    psql_primary "select pg_drop_replication_slot('$slot')" >/dev/null 2>&1 && break
    sleep 0.1
  done
  rm -rf "$work"
}
trap cleanup EXIT

echo "== base backup of the primary into $data"
started=$(date +%s)
# -c fast: a checkpoint now, not spread over checkpoint_timeout; -R writes primary_conninfo
# (with the slot) and standby.signal; -X stream copies the WAL written meanwhile; -C -S
# creates the slot the replica then streams from.
as_owner "$bin/pg_basebackup" -d "${PRIMARY_URL%/*}/postgres" -D "$data" -R -X stream -c fast -C -S "$slot" -N
# Debian keeps postgresql.conf and pg_hba.conf outside the data directory: the copy has
# neither, so the replica gets its own, trusting this machine only.
as_owner sh -c "touch '$data/postgresql.conf' '$data/pg_ident.conf' &&
  printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' > '$data/pg_hba.conf'"

echo "== replica on 127.0.0.1:$port"
"$work/ctl" start >/dev/null
REPLICA_URL="postgres://postgres@127.0.0.1:$port/postgres"
for _ in $(seq 1 100); do
  [ "$(psql "$REPLICA_URL" -Atc 'select pg_is_in_recovery()' 2>/dev/null)" = t ] && break
  sleep 0.1
done
if [ "$(psql "$REPLICA_URL" -Atc 'select pg_is_in_recovery()' 2>/dev/null)" != t ]; then
  echo "the replica did not come up as a standby; its log:" >&2
  cat "$work/replica.log" >&2 || true
  exit 1
fi
# Accepting reads is not yet streaming: its WAL receiver connects to the primary just after.
for _ in $(seq 1 300); do
  [ "$(psql "$REPLICA_URL" -Atc "select count(*) from pg_stat_wal_receiver where status = 'streaming'" 2>/dev/null)" = 1 ] && break
  sleep 0.1
done
if [ "$(psql "$REPLICA_URL" -Atc "select count(*) from pg_stat_wal_receiver where status = 'streaming'" 2>/dev/null)" != 1 ]; then
  echo "the replica does not stream from the primary" >&2
  exit 1
fi
psql "$REPLICA_URL" -Atc "select 'streaming from the primary since ' || pg_last_wal_receive_lsn() from pg_stat_wal_receiver"
echo "ready in $(($(date +%s) - started)) s"

if [ "${1:-}" = --run ]; then
  shift
  echo "== $*"
  BENCH_REPLICA_URL=$REPLICA_URL TEST_DATABASE_REPLICA_URL=$REPLICA_URL "$@"
  exit
fi

echo "== report, stream replay and event feed tests reading from the replica"
TEST_DATABASE_REPLICA_URL=$REPLICA_URL \
  npx jest test/integration/reports/reports.test.ts test/integration/streams/streams.test.ts \
  test/integration/payments/event-feed.test.ts "$@"

echo "== the replica stopped mid-run: reads go back to the primary"
# (replica-unreachable.test.ts, beside it, needs no replica: the main suite runs it.)
TEST_DATABASE_REPLICA_URL=$REPLICA_URL TEST_REPLICA_CTL="$work/ctl" \
  npx jest test/integration/replica/replica-fallback.test.ts "$@"
