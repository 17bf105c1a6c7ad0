#!/usr/bin/env bash
# Runs a command with moto's S3 server on a loopback port, for the S3 media storage tests:
#   scripts/with-moto.sh swift test
# The command sees PLAZA_TEST_S3_URL=http://127.0.0.1:PORT. moto keeps everything in memory
# and is stopped when the command ends.
set -euo pipefail
log() { echo "with-moto: $*" >&2; }

command -v moto_server >/dev/null 2>&1 || { log "moto_server is missing: scripts/install-deps.sh test installs it"; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
logfile=$(mktemp -t plaza-moto.XXXXXX)
moto_server -H 127.0.0.1 -p "$port" >"$logfile" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$logfile"' EXIT
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/moto-api/" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then log "moto_server exited:"; cat "$logfile" >&2; exit 1; fi
  sleep 0.1
done
log "S3 on http://127.0.0.1:$port"
PLAZA_TEST_S3_URL="http://127.0.0.1:$port" "$@"
