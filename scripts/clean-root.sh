#!/usr/bin/env bash
# Prints the path of a Debian 12 root that has never seen Swift: debootstrap's minimal base plus
# exactly the runtime packages of packaging/install-runtime.sh, installed by that script. Made
# once (about 3 minutes) and kept outside the clone, under PLAZA_CACHE_DIR (default
# ~/.cache/plaza), until the script changes. e2e/test_install.py unpacks the archive into it.
# Needs root (debootstrap, chroot) and Debian's mirror (PLAZA_DEBIAN_MIRROR).
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${PLAZA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/plaza}"
mirror="${PLAZA_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
key=$(cat packaging/install-runtime.sh scripts/clean-root.sh | sha256sum | cut -c1-12)
root="$cache/debian12-runtime-$key"
if [ -f "$root/.plaza-root" ]; then
  echo "$root"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || { echo "clean-root: needs root (debootstrap and chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null 2>&1 || { echo "clean-root: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
mkdir -p "$cache"
# Roots made by an earlier version of these scripts.
find "$cache" -maxdepth 1 -name 'debian12-runtime-*' ! -name "debian12-runtime-$key" -exec rm -rf {} +
work="$root.partial"
rm -rf "$work"
echo "clean-root: debootstrap --variant=minbase bookworm into $work" >&2
debootstrap --variant=minbase bookworm "$work" "$mirror" >&2
cp /etc/resolv.conf "$work/etc/resolv.conf"
cp packaging/install-runtime.sh "$work/tmp/install-runtime.sh"
echo "clean-root: packaging/install-runtime.sh inside it" >&2
# A mount namespace of its own: /proc is mounted for apt and gone again with the namespace.
unshare --mount --fork sh -c 'mount -t proc proc "$1/proc" && chroot "$1" /bin/sh /tmp/install-runtime.sh' sh "$work" >&2
rm -f "$work/tmp/install-runtime.sh"
touch "$work/.plaza-root"
mv "$work" "$root"
echo "$root"
