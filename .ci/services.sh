#!/usr/bin/env bash
# Install (when missing) and start the servers the test suite uses, on loopback only, and print
# the environment variables the tests read; chromium too, for the docs browser tests. Used by
# .ci/run; usable by hand:
#   eval "$(bash .ci/services.sh)"
set -euo pipefail

log() { echo "services: $*" >&2; }

# The postgres user cannot read the (root-owned) checkout; run from a neutral directory.
cd /

if ! command -v redis-server >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  log "installing redis-server and postgresql from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq redis-server postgresql >&2
fi

# PgBouncer in transaction mode in front of the test PostgreSQL (the store behind a pooler).
if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
  log "installing pgbouncer from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq pgbouncer >&2
fi
PGBOUNCER=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)

# The browser the docs tests look at the built site with (tests/examples/test_docs_browser.py),
# and the viewer tests at its pages (tests/examples/test_view_browser.py).
if ! command -v chromium >/dev/null 2>&1; then
  log "installing chromium from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq chromium >&2
fi

REDIS_PORT="${THREADLINE_REDIS_PORT:-6379}"
if ! redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
  log "starting redis-server on 127.0.0.1:$REDIS_PORT"
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --daemonize yes --save '' \
    --appendonly no --logfile /tmp/threadline-redis.log >&2
fi
for _ in $(seq 1 50); do
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
  sleep 0.2
done
redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null

# A 3-master Redis Cluster on loopback (no replicas: the tests kill and restart a primary), with
# append-only persistence on as production runs it. Each node keeps its files in its own
# directory, so a restarted node finds its nodes.conf and its append-only file.
CLUSTER_PORTS="${THREADLINE_REDIS_CLUSTER_PORTS:-7001 7002 7003}"
CLUSTER_DIR="${THREADLINE_REDIS_CLUSTER_DIR:-/tmp/threadline-redis-cluster}"
for port in $CLUSTER_PORTS; do
  if ! redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1; then
    log "starting redis-server (cluster node) on 127.0.0.1:$port"
    mkdir -p "$CLUSTER_DIR/$port"
    redis-server --bind 127.0.0.1 --port "$port" --daemonize yes --dir "$CLUSTER_DIR/$port" \
      --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
      --appendonly yes --save '' --logfile "$CLUSTER_DIR/$port.log" >&2
  fi
done
for port in $CLUSTER_PORTS; do
  for _ in $(seq 1 50); do
    redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.2
  done
done
FIRST_PORT="${CLUSTER_PORTS%% *}"
if redis-cli -h 127.0.0.1 -p "$FIRST_PORT" cluster info | grep -q "cluster_slots_assigned:0"; then
  log "creating the cluster on ports $CLUSTER_PORTS"
  # shellcheck disable=SC2086 # one address per port
  redis-cli --cluster create $(for port in $CLUSTER_PORTS; do echo "127.0.0.1:$port"; done) \
    --cluster-replicas 0 --cluster-yes >&2
fi
for _ in $(seq 1 100); do
  redis-cli -h 127.0.0.1 -p "$FIRST_PORT" cluster info | grep -q "cluster_state:ok" && break
  sleep 0.2
done
redis-cli -h 127.0.0.1 -p "$FIRST_PORT" cluster info | grep -q "cluster_state:ok"

PG_VERSION=$(ls /usr/lib/postgresql | sort -n | tail -1)
if ! pg_lsclusters -h 2>/dev/null | grep -q "^$PG_VERSION main"; then
  log "creating postgresql cluster $PG_VERSION/main"
  pg_createcluster "$PG_VERSION" main >&2
fi
if ! pg_lsclusters -h | grep "^$PG_VERSION main" | grep -q online; then
  log "starting postgresql $PG_VERSION on 127.0.0.1"
  pg_ctlcluster "$PG_VERSION" main start >&2
fi
PG_PORT=$(pg_lsclusters -h | awk -v v="$PG_VERSION" '$1 == v && $2 == "main" {print $3}')
for _ in $(seq 1 50); do
  su postgres -c "psql -p $PG_PORT -qAtc 'select 1'" >/dev/null 2>&1 && break
  sleep 0.2
done
su postgres -c "psql -p $PG_PORT -v ON_ERROR_STOP=1 -qAt" >&2 <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'threadline') THEN
    CREATE ROLE threadline LOGIN PASSWORD 'threadline';
  END IF;
END \$\$;
SQL
if ! su postgres -c "psql -p $PG_PORT -qAtc \"select 1 from pg_database where datname='threadline'\"" | grep -q 1; then
  su postgres -c "createdb -p $PG_PORT -O threadline threadline" >&2
fi

# PgBouncer (transaction pooling, as production runs it in front of many workers) on loopback,
# run as the postgres user (it refuses root), its files under /tmp.
PGBOUNCER_PORT="${THREADLINE_PGBOUNCER_PORT:-6432}"
PGBOUNCER_DIR=/tmp/threadline-pgbouncer
if ! PGPASSWORD=threadline psql -h 127.0.0.1 -p "$PGBOUNCER_PORT" -U threadline -qAtc 'select 1' \
    threadline >/dev/null 2>&1 </dev/null; then
  log "starting pgbouncer (transaction mode) on 127.0.0.1:$PGBOUNCER_PORT"
  mkdir -p "$PGBOUNCER_DIR"
  cat >"$PGBOUNCER_DIR/pgbouncer.ini" <<INI
[databases]
threadline = host=127.0.0.1 port=$PG_PORT dbname=threadline
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PGBOUNCER_PORT
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $PGBOUNCER_DIR/userlist.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
logfile = $PGBOUNCER_DIR/pgbouncer.log
pidfile = $PGBOUNCER_DIR/pgbouncer.pid
INI
  echo '"threadline" "threadline"' >"$PGBOUNCER_DIR/userlist.txt"
  chown -R postgres "$PGBOUNCER_DIR"
  chmod 700 "$PGBOUNCER_DIR"
  su postgres -c "$PGBOUNCER -d $PGBOUNCER_DIR/pgbouncer.ini" >&2
fi
for _ in $(seq 1 50); do
  PGPASSWORD=threadline psql -h 127.0.0.1 -p "$PGBOUNCER_PORT" -U threadline -qAtc 'select 1' \
    threadline >/dev/null 2>&1 && break
  sleep 0.2
done
PGPASSWORD=threadline psql -h 127.0.0.1 -p "$PGBOUNCER_PORT" -U threadline -qAtc 'select 1' \
  threadline >/dev/null

echo "export THREADLINE_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0"
echo "export THREADLINE_REDIS_CLUSTER_URL=redis://127.0.0.1:$FIRST_PORT/0"
echo "export THREADLINE_POSTGRES_DSN=postgresql://threadline:threadline@127.0.0.1:$PG_PORT/threadline"
echo "export THREADLINE_PGBOUNCER_URL=postgresql://threadline:threadline@127.0.0.1:$PGBOUNCER_PORT/threadline"
