#!/usr/bin/env bash
# Runs a command with real SMTP servers (aiosmtpd) on loopback, for the mail tests:
#   scripts/with-smtp.sh swift test
# The command sees PLAZA_TEST_SMTP_DIR, the folder scripts/smtp-sink.py keeps its certificate
# (cert.pem) and the mail it receives (mail/) in, and PLAZA_TEST_SMTP_PORTS, its ports as JSON
# ({"plain": …, "starttls": …, "tls": …}). The servers stop when the command ends.
set -euo pipefail
log() { echo "with-smtp: $*" >&2; }

python3 -c 'import aiosmtpd' 2>/dev/null || { log "aiosmtpd is missing: scripts/install-deps.sh test installs it"; exit 1; }
dir=$(mktemp -d -t plaza-smtp.XXXXXX)
python3 "$(dirname "$0")/smtp-sink.py" "$dir" >"$dir/ports" 2>"$dir/log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 100); do
  if [ -s "$dir/ports" ]; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then log "smtp-sink.py exited:"; cat "$dir/log" >&2; exit 1; fi
  sleep 0.1
done
log "SMTP on $(cat "$dir/ports")"
PLAZA_TEST_SMTP_DIR="$dir" PLAZA_TEST_SMTP_PORTS="$(cat "$dir/ports")" "$@"
