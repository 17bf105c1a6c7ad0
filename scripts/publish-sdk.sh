#!/usr/bin/env bash
# Makes the history of the SDK's own repository from sdk/ and says how to publish it; it pushes
# nothing (docs/sdk.md, "Publishing it").
#   scripts/publish-sdk.sh [VERSION]    VERSION: the tag apps depend on (x.y.z), Plaza's own
#                                       (PlazaVersion.number) unless given
# `git subtree split --prefix=sdk` writes the commits that touched sdk/, with sdk/ as their root,
# to the branch sdk-release. The split is the same every time, so the branch only grows and
# every tag pushed from it stays in the SDK repository's history.
set -euo pipefail
cd "$(dirname "$0")/.."

version="${1:-$(sed -n 's/.*static let number = "\([^"]*\)".*/\1/p' Sources/PlazaServer/Support/PlazaVersion.swift)}"
if ! printf '%s\n' "$version" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'; then
  echo "publish-sdk: '$version' is not a version Swift packages can depend on (x.y.z)" >&2
  exit 2
fi
if ! (git subtree -h 2>&1 || true) | grep -q "subtree split"; then
  echo "publish-sdk: git subtree is missing (Debian and Ubuntu have it in git; macOS in Xcode's git)" >&2
  exit 1
fi
if [ -n "$(git status --porcelain -- sdk)" ]; then
  echo "publish-sdk: note: sdk/ has changes that are not committed; the split takes committed ones only" >&2
fi

commit="$(git subtree split -q --prefix=sdk --branch sdk-release)"
echo
echo "sdk-release is at $commit: sdk/ of $(git rev-parse --short HEAD) as a repository of its own."
echo "To publish it as PlazaKit $version (the SDK's repository as the remote plaza-swift):"
echo
echo "  git remote add plaza-swift https://your.git.host/plaza-swift.git   # once"
echo "  git push plaza-swift sdk-release:main"
echo "  git push plaza-swift $commit:refs/tags/$version"
echo
echo "Apps that depend on .package(url: …/plaza-swift.git, from: \"$version\") get it once the tag is there."
