#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL server:
#   scripts/with-postgres.sh swift test
# Starts a fresh cluster in a temp folder on a free loopback port, exports
#   PLAZA_TEST_DATABASE_URL=postgres://plaza:plaza@127.0.0.1:PORT/plaza
# (role plaza is a superuser, so tests may CREATE DATABASE), runs the command, then stops the
# server and deletes the folder, also when the command fails. Exits with the command's code.
set -euo pipefail

[ "$#" -gt 0 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
log() { echo "with-postgres: $*" >&2; }

# The server binaries: Debian keeps them in /usr/lib/postgresql/<version>/bin (highest wins),
# Homebrew's postgresql@16 is keg-only; else whatever is on PATH.
bin=""
for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) \
  /opt/homebrew/opt/postgresql@16/bin /usr/local/opt/postgresql@16/bin; do
  if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then bin="$dir"; break; fi
done
if [ -z "$bin" ] && command -v pg_ctl >/dev/null 2>&1; then bin="$(dirname "$(command -v pg_ctl)")"; fi
[ -n "$bin" ] || { log "initdb/pg_ctl not found; run scripts/install-deps.sh test"; exit 1; }

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/plaza-pg.XXXXXX")"
data="$tmp/data"

# PostgreSQL refuses to run as root: then the cluster belongs to the postgres system user.
owner=""
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || { log "running as root needs the 'postgres' user (Debian's postgresql package makes it)"; exit 1; }
  owner=postgres
  chown "$owner:" "$tmp"
fi
pg() { if [ -n "$owner" ]; then runuser -u "$owner" -- "$@"; else "$@"; fi; }

stop() {
  local status=$?
  if [ -f "$data/postmaster.pid" ]; then pg "$bin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
  exit "$status"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Local (socket) connections are trusted; TCP ones need the password, as in production.
echo plaza >"$tmp/pwfile"
[ -z "$owner" ] || chown "$owner:" "$tmp/pwfile"
if ! pg "$bin/initdb" -D "$data" -U plaza --pwfile="$tmp/pwfile" -E UTF8 --locale=C \
  --auth-local=trust --auth-host=scram-sha-256 >"$tmp/initdb.log" 2>&1; then
  cat "$tmp/initdb.log" >&2
  exit 1
fi

# Durability off for speed: this cluster is thrown away.
cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$tmp'
# Every suite runs at once, each test with its own pools (the app's, the shared limits', a
# listener): room for all of them (at 400 the suite met "too many clients" and waited on retries).
max_connections = 1000
fsync = off
synchronous_commit = off
full_page_writes = off
CONF

if ! pg "$bin/pg_ctl" -D "$data" -l "$tmp/server.log" -w -t 60 start >/dev/null; then
  cat "$tmp/server.log" >&2
  exit 1
fi
pg "$bin/psql" -h "$tmp" -p "$port" -U plaza -d postgres -qAt -v ON_ERROR_STOP=1 -c 'CREATE DATABASE plaza' >/dev/null

export PLAZA_TEST_DATABASE_URL="postgres://plaza:plaza@127.0.0.1:$port/plaza"
log "PostgreSQL $("$bin/pg_ctl" --version | awk '{print $3}') at $PLAZA_TEST_DATABASE_URL"

set +e
"$@"
status=$?
set -e
exit "$status"
