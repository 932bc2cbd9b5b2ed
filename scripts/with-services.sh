#!/usr/bin/env bash
# Start a private PostgreSQL and Redis on free loopback ports in a temporary directory, export
# DATABASE_URL and REDIS_URL, run the given command, and stop both afterwards.
# Usage: scripts/with-services.sh COMMAND [ARGS...]
# HINDSIGHT_PG_OPTIONS adds server settings (e.g. "-c shared_buffers=6GB" for a benchmark).
set -euo pipefail
cd "$(dirname "$0")/.."

pg_bin() {
  if command -v "$1" >/dev/null 2>&1; then command -v "$1"; else ls /usr/lib/postgresql/*/bin/"$1" | sort -V | tail -n1; fi
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

workdir=$(mktemp -d "${TMPDIR:-/tmp}/hindsight-services.XXXXXX")
chmod 755 "$workdir"
pg_port=$(free_port)
redis_port=$(free_port)
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  # initdb and pg_ctl refuse to run as root.
  as_pg=(runuser -u postgres --)
  chown postgres "$workdir"
fi

cleanup() {
  set +e
  "${as_pg[@]}" "$(pg_bin pg_ctl)" -D "$workdir/pg" -m immediate stop >/dev/null 2>&1
  [ -f "$workdir/redis.pid" ] && kill "$(cat "$workdir/redis.pid")" 2>/dev/null
  sleep 0.2
  rm -rf "$workdir"
}
trap cleanup EXIT INT TERM

"${as_pg[@]}" "$(pg_bin initdb)" -D "$workdir/pg" -U hindsight --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
"${as_pg[@]}" "$(pg_bin pg_ctl)" -D "$workdir/pg" -l "$workdir/pg.log" -w -t 60 \
  -o "-p $pg_port -k $workdir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=256MB ${HINDSIGHT_PG_OPTIONS:-}" \
  start >/dev/null
"$(pg_bin createdb)" -h 127.0.0.1 -p "$pg_port" -U hindsight hindsight

redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
  --pidfile "$workdir/redis.pid" --logfile "$workdir/redis.log" --dir "$workdir"
for _ in $(seq 50); do
  redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
  sleep 0.1
done

export DATABASE_URL="postgres://hindsight@127.0.0.1:$pg_port/hindsight"
export REDIS_URL="redis://127.0.0.1:$redis_port/0"
echo "PostgreSQL on 127.0.0.1:$pg_port, Redis on 127.0.0.1:$redis_port" >&2
set +e
"$@"
status=$?
exit $status
