#!/usr/bin/env bash
# Fuzzes the HTTP API against its own OpenAPI document with schemathesis:
#   scripts/schemathesis.sh [EXTRA SCHEMATHESIS ARGS...]
# Starts `plaza serve` on a temp data dir and a free port (rate limits off, cheap bcrypt),
# registers a user for a bearer token, runs the checks below, stops the server. Exits non-zero
# on any failure. Settings (environment):
#   PLAZA_BIN           binary (default .build/debug/plaza)
#   SCHEMATHESIS_SCHEMA schema location (default the server's /api/v1/openapi.json; a file
#                       works too, e.g. to try a draft document)
#   SCHEMATHESIS_MAX_EXAMPLES  cases per operation and phase (default 50: 29 operations took 20 s)
set -euo pipefail
# Files named relative to where we were called from.
case "${PLAZA_BIN:-}" in "" | /*) ;; *) PLAZA_BIN="$PWD/$PLAZA_BIN" ;; esac
case "${SCHEMATHESIS_SCHEMA:-}" in "" | http* | /*) ;; *) SCHEMATHESIS_SCHEMA="$PWD/$SCHEMATHESIS_SCHEMA" ;; esac
cd "$(dirname "$0")/.."

bin="${PLAZA_BIN:-.build/debug/plaza}"
max_examples="${SCHEMATHESIS_MAX_EXAMPLES:-50}"
log() { echo "schemathesis.sh: $*" >&2; }
[ -x "$bin" ] || { log "no binary at $bin; run 'swift build' first or set PLAZA_BIN"; exit 1; }
command -v schemathesis >/dev/null 2>&1 || { log "schemathesis missing: run scripts/install-deps.sh test"; exit 1; }
# The options below are schemathesis 4's (3.x named several differently and lacks --origin).
version="$(schemathesis --version | grep -Eo '[0-9]+(\.[0-9]+)+' | head -n 1)"
case "$version" in
  4.*) ;;
  *) log "schemathesis 4.x needed, found '$version': run scripts/install-deps.sh test"; exit 1 ;;
esac

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
base="http://127.0.0.1:$port"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/plaza-fuzz.XXXXXX")"
server_pid=""

cleanup() {
  local status=$?
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    # A graceful shutdown takes well under 10 s; a server that exits non-zero fails the run.
    kill -TERM "$server_pid"
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null && log "the server ignored SIGTERM for 10 s"
    wait "$server_pid" || { log "the server exited with $? after SIGTERM"; [ "$status" -ne 0 ] || status=1; }
  fi
  # The server's log tells what went wrong behind a failure.
  if [ "$status" -ne 0 ] && [ -f "$tmp/server.log" ]; then log "server log (tail):"; tail -n 40 "$tmp/server.log" >&2; fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PLAZA_LINK_PREVIEW_PUBLIC=off PLAZA_PUSH_PUBLIC=off PLAZA_BCRYPT_COST=10 PLAZA_DATABASE_URL='' "$bin" serve --host 127.0.0.1 --port "$port" \
  --data-dir "$tmp/data" --rate-limits off >"$tmp/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 300); do
  curl -fsS "$base/healthz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { log "the server did not start"; exit 1; }
  sleep 0.1
done
curl -fsS "$base/healthz" >/dev/null || { log "no answer from $base/healthz"; exit 1; }

# A signed-in user, so that the protected operations get past authentication.
token="$(curl -fsS -X POST "$base/api/v1/auth/register" -H 'Content-Type: application/json' \
  -d '{"username": "fuzzer", "email": "fuzzer@example.com", "password": "fuzzer-password-1"}' |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')" ||
  { log "could not register the fuzzing user"; exit 1; }

schema="${SCHEMATHESIS_SCHEMA:-$base/api/v1/openapi.json}"
# Every check but the two that judge whether a value the document allows is accepted (and one
# it forbids refused): a cursor or an id the server never gave out, a name that is all spaces,
# following oneself are valid by shape and refused by meaning, which JSON Schema cannot say.
checks="all"
excluded_checks="positive_data_acceptance,negative_data_rejection"
# Signing out, or deleting sessions (the stateful phase may find ours), would revoke the token
# that every later request relies on. The event stream never ends, so it is tested by the
# Swift and e2e suites instead (Tests/PlazaServerTests/RealtimeTests.swift, e2e/test_realtime.py), and
# so are Mastodon's streams (MastodonTests.swift, e2e/test_mastodon.py).
exclude='/auth/logout$|/me/sessions/\{[^}]+\}$|/stream$|/streaming/(user|public)'

log "schemathesis $version against $schema"
args=(run "$schema" --checks "$checks" --exclude-checks "$excluded_checks" --max-examples "$max_examples" --workers 2
  --request-timeout 10 --exclude-path-regex "$exclude" --generation-database none)
# A URL gets its base path from the document's `servers`, on our origin; a file needs the address.
case "$schema" in
  http*) args+=(--origin "$base") ;;
  *) args+=(--url "$base/api/v1") ;;
esac

# The JUnit report stays (for CI to keep); the rest of the run goes with the temp folder.
junit="$PWD/.build/schemathesis/junit.xml"
mkdir -p "$(dirname "$junit")"
rm -f "$junit"
# schemathesis runs in the temp folder, where it keeps its cache (.schemathesis/); the
# project's own schemathesis.toml, should it get one, still applies.
config=()
[ ! -f schemathesis.toml ] || config=(--config-file "$PWD/schemathesis.toml")
# Each valid Idempotency-Key made unique: a repeated one replays a first answer (see the file).
export SCHEMATHESIS_HOOKS="$PWD/scripts/schemathesis_hooks.py"
cd "$tmp"
# schemathesis takes headers only as arguments; the token belongs to a throwaway account
# on a throwaway server.
set +e
schemathesis ${config[@]+"${config[@]}"} "${args[@]}" --report junit --report-junit-path "$junit" \
  -H "Authorization: Bearer $token" "$@"
status=$?
set -e

# A closing line in the plain "N passed, N failed" form, from the JUnit report.
if [ -f "$junit" ]; then
  python3 - "$junit" <<'PY'
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
outcomes = [("failed" if c.find("failure") is not None or c.find("error") is not None
             else "skipped" if c.find("skipped") is not None else "passed") for c in cases]
print(f"schemathesis: {outcomes.count('passed')} passed, {outcomes.count('failed')} failed, {outcomes.count('skipped')} skipped")
PY
fi
exit "$status"
