#!/usr/bin/env bash
# Builds Plaza's archive for Linux servers: dist/plaza-<version>-linux-<arch>.tar.gz and its
# .sha256. The binary carries the Swift runtime (--static-swift-stdlib), so the server needs no
# Swift, only the packages of packaging/install-runtime.sh (docs/install.md).
#   scripts/dist.sh           the release build (`make dist`)
#   scripts/dist.sh --debug   the same archive around a debug build: what `make test` unpacks into
#                             a clean root, without a second, optimised build of everything
set -euo pipefail
cd "$(dirname "$0")/.."

config=release
case "${1:-}" in
  "") ;;
  --debug) config=debug ;;
  *) echo "usage: $0 [--debug]" >&2; exit 2 ;;
esac
[ "$(uname -s)" = Linux ] || { echo "error: the archive is for Linux; build it on Linux" >&2; exit 1; }

version=$(sed -n 's/.*static let number = "\(.*\)"/\1/p' Sources/PlazaServer/Support/PlazaVersion.swift)
[ -n "$version" ] || { echo "error: no version in PlazaVersion.swift" >&2; exit 1; }
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- Sources sdk Package.swift 2>/dev/null; then
  commit="$commit+changes"
fi
name="plaza-$version-linux-$(uname -m)"
[ "$config" = debug ] && name="$name-debug"

# A build folder of its own: objects compiled for the static runtime must not mix with the test
# build's in .build, which links the runtime dynamically (XCTest and Swift Testing need it).
# The tests' debug archive builds in a folder kept outside the clone (PLAZA_CACHE_DIR, as the
# clean root is), so a new clone compiles only Plaza's own modules there, not every package.
if [ "$config" = debug ]; then
  build_dir="${PLAZA_DIST_BUILD:-${PLAZA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/plaza}/build-dist}"
else
  build_dir="${PLAZA_DIST_BUILD:-.build-dist}"
fi
scratch=(--scratch-path "$build_dir")
echo "==> Building plaza ($config, Swift runtime linked in, in $build_dir)"
swift build "${scratch[@]}" -c "$config" --product plaza --static-swift-stdlib
bin=$(swift build "${scratch[@]}" -c "$config" --show-bin-path)

stage="dist/$name"
rm -rf "$stage" "dist/$name.tar.gz" "dist/$name.tar.gz.sha256"
mkdir -p "$stage/licenses" "$stage/docs"
cp "$bin/plaza" "$stage/plaza"
# Debug information stays out of the archive (it is most of a debug build); the symbol table
# stays, for crash backtraces.
strip --strip-debug "$stage/plaza"
cp -R "$bin/plaza_PlazaServer.resources" "$stage/"
echo "$commit" > "$stage/plaza_PlazaServer.resources/BUILD"
cp packaging/plaza.service packaging/plaza-backup.service packaging/plaza-backup.timer packaging/install-runtime.sh "$stage/"
cp packaging/plaza.env "$stage/plaza.env.example"
cp -R packaging/nginx packaging/Caddyfile "$stage/"
cp LICENSE CHANGELOG.md "$stage/"
cp docs/install.md docs/configuration.md docs/upgrading.md docs/troubleshooting.md docs/operations.md "$stage/docs/"

# The licences of what the binary links in: the Swift runtime and Foundation, each Swift package
# (BoringSSL and SQLite come inside swift-crypto, swift-nio-ssl and sqlite-nio, whose licence
# files name them), zlib. libvips and ffmpeg are Debian's, loaded or run at run time.
cp /opt/swift/usr/share/swift/LICENSE.txt "$stage/licenses/swift.txt" 2>/dev/null \
  || cp "$(dirname "$(dirname "$(command -v swift)")")/share/swift/LICENSE.txt" "$stage/licenses/swift.txt"
for checkout in "$build_dir"/checkouts/*; do
  for file in "$checkout"/LICENSE* "$checkout"/LICENCE* "$checkout"/COPYING*; do
    [ -f "$file" ] && cp "$file" "$stage/licenses/$(basename "$checkout").txt" && break
  done
done
[ -f /usr/share/doc/zlib1g/copyright ] && cp /usr/share/doc/zlib1g/copyright "$stage/licenses/zlib.txt"

(cd "$stage" && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | sed 's|^\./||' | xargs sha256sum > SHA256SUMS)
tar -C dist -czf "dist/$name.tar.gz" "$name"
(cd dist && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "==> dist/$name.tar.gz ($(du -h "dist/$name.tar.gz" | cut -f1); the binary $(du -h "$stage/plaza" | cut -f1) unpacked)"
