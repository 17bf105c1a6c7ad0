#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL server:
#   scripts/with-postgres.sh swift test
# Starts a fresh cluster in a temp folder on a free loopback port, exports
#   PLAZA_TEST_DATABASE_URL=postgres://plaza:plaza@127.0.0.1:PORT/plaza
# (role plaza is a superuser, so tests may CREATE DATABASE), and a second one that takes TLS
# connections only, with a certificate for "localhost" from a throwaway CA:
#   PLAZA_TEST_TLS_DATABASE_URL=postgres://plaza:plaza@localhost:PORT/postgres
#   PLAZA_TEST_TLS_CA, PLAZA_TEST_TLS_OTHER_CA   the CA's certificate, and another CA's
# runs the command, then stops the servers and deletes the folder, also when the command fails.
# The clusters run without durability (fsync off) unless PLAZA_PG_DURABLE=1, which keeps
# PostgreSQL's defaults (the benchmark's PostgreSQL column).
# Exits with the command's code.
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

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port="$(free_port)"
tls_port="$(free_port)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/plaza-pg.XXXXXX")"
data="$tmp/data"
tls_data="$tmp/tls-data"
tls="$tmp/tls"

# PostgreSQL refuses to run as root: then the clusters belong to the postgres system user.
owner=""
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || { log "running as root needs the 'postgres' user (Debian's postgresql package makes it)"; exit 1; }
  owner=postgres
  chown "$owner:" "$tmp"
fi
pg() { if [ -n "$owner" ]; then runuser -u "$owner" -- "$@"; else "$@"; fi; }

stop() {
  local status=$?
  for dir in "$data" "$tls_data"; do
    if [ -f "$dir/postmaster.pid" ]; then pg "$bin/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null 2>&1 || true; fi
  done
  rm -rf "$tmp"
  exit "$status"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Local (socket) connections are trusted; TCP ones need the password, as in production.
echo plaza >"$tmp/pwfile"
[ -z "$owner" ] || chown "$owner:" "$tmp/pwfile"

# start_cluster DIR PORT [CONF]: a new cluster in DIR on PORT, CONF appended to its settings.
start_cluster() {
  local dir="$1" cluster_port="$2" extra="${3:-}"
  if ! pg "$bin/initdb" -D "$dir" -U plaza --pwfile="$tmp/pwfile" -E UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256 >"$tmp/initdb.log" 2>&1; then
    cat "$tmp/initdb.log" >&2
    exit 1
  fi
  # Durability off for speed: these clusters are thrown away.
  local durability="fsync = off
synchronous_commit = off
full_page_writes = off"
  [ "${PLAZA_PG_DURABLE:-}" != 1 ] || durability=""
  cat >>"$dir/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $cluster_port
unix_socket_directories = '$tmp'
$durability
$extra
CONF
  if ! pg "$bin/pg_ctl" -D "$dir" -l "$dir.log" -w -t 60 start >/dev/null; then
    cat "$dir.log" >&2
    exit 1
  fi
}

# Every suite runs at once, each test with its own pools (the app's, the shared limits', a
# listener): room for all of them (at 400 the suite met "too many clients" and waited on retries).
start_cluster "$data" "$port" "max_connections = 1000"
pg "$bin/psql" -h "$tmp" -p "$port" -U plaza -d postgres -qAt -v ON_ERROR_STOP=1 -c 'CREATE DATABASE plaza' >/dev/null
export PLAZA_TEST_DATABASE_URL="postgres://plaza:plaza@127.0.0.1:$port/plaza"

# A second server that takes TLS connections only, for the sslmode tests: a throwaway CA, a
# certificate it signed for the name "localhost" alone (so 127.0.0.1 is the wrong host name),
# and another CA that signed nothing of it.
mkdir -p "$tls"
ssl() { openssl "$@" >/dev/null 2>&1 || { log "openssl $1 failed"; exit 1; }; }
ssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Plaza test CA" -keyout "$tls/ca.key" -out "$tls/ca.pem"
ssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Another CA" -keyout "$tls/other-ca.key" -out "$tls/other-ca.pem"
ssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$tls/server.key" -out "$tls/server.csr"
printf 'subjectAltName=DNS:localhost\n' >"$tls/server.ext"
ssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 2 -extfile "$tls/server.ext" -out "$tls/server.pem"
chmod 600 "$tls/server.key"
[ -z "$owner" ] || chown -R "$owner:" "$tls"
start_cluster "$tls_data" "$tls_port" "max_connections = 20
ssl = on
ssl_cert_file = '$tls/server.pem'
ssl_key_file = '$tls/server.key'"
sed -i.bak 's/^host /hostssl /' "$tls_data/pg_hba.conf"
pg "$bin/pg_ctl" -D "$tls_data" -w reload >/dev/null
export PLAZA_TEST_TLS_DATABASE_URL="postgres://plaza:plaza@localhost:$tls_port/postgres"
export PLAZA_TEST_TLS_CA="$tls/ca.pem" PLAZA_TEST_TLS_OTHER_CA="$tls/other-ca.pem"

log "PostgreSQL $("$bin/pg_ctl" --version | awk '{print $3}') at $PLAZA_TEST_DATABASE_URL (TLS only: $PLAZA_TEST_TLS_DATABASE_URL)"

set +e
"$@"
status=$?
set -e
exit "$status"
