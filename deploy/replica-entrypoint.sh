#!/bin/bash
# The replica's first start copies the primary with pg_basebackup -R (a
# standby.signal and primary_conninfo come with it); later starts resume
# streaming from where the replica was.
set -euo pipefail
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	until pg_isready -h primary -U replicator; do sleep 1; done
	pg_basebackup -h primary -U replicator -D "$PGDATA" -R -X stream -c fast
	chmod 0700 "$PGDATA"
fi
exec postgres -c hot_standby=on -c hot_standby_feedback=on
