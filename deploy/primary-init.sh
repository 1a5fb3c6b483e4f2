#!/bin/bash
# Runs once, when the primary's data directory is created: a role the
# replica streams WAL with, allowed in from the compose network.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
	-c "CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD 'replicator'"
echo "host replication replicator all scram-sha-256" >>"$PGDATA/pg_hba.conf"
