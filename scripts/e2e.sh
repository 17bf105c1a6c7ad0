#!/usr/bin/env bash
# Runs the end-to-end suite (e2e/, pytest) against a built binary:
#   scripts/e2e.sh [PYTEST ARGS...]      PLAZA_BIN=path/to/plaza (default .build/debug/plaza)
set -euo pipefail
# A binary named relative to where we were called from.
case "${PLAZA_BIN:-}" in "" | /*) ;; *) PLAZA_BIN="$PWD/$PLAZA_BIN" ;; esac
cd "$(dirname "$0")/.."

export PLAZA_BIN="${PLAZA_BIN:-.build/debug/plaza}"
if [ ! -x "$PLAZA_BIN" ]; then
  echo "e2e: no binary at $PLAZA_BIN; run 'swift build' first or set PLAZA_BIN" >&2
  exit 1
fi

set +e
python3 -m pytest -p no:cacheprovider -ra --durations=15 e2e "$@"
status=$?
set -e
# pytest exits 5 when it collected no test: a suite that tests nothing must not pass.
if [ "$status" -eq 5 ]; then
  echo "e2e: pytest collected no tests; treating that as a failure" >&2
  exit 1
fi
exit "$status"
