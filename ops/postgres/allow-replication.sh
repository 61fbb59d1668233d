#!/usr/bin/env bash
# Run once by the official postgres image when it initialises the primary's data directory
# (docker-compose.yml mounts it into /docker-entrypoint-initdb.d): lets the read replica
# (the postgres-replica service) stream from it over the compose network, with the same
# password as every other connection. A data volume made before this file existed has no
# such rule: add the line to its pg_hba.conf and reload (`select pg_reload_conf()`), or
# start from an empty volume.
set -euo pipefail
echo 'host replication all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
