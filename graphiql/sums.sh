#!/usr/bin/env bash
# sums.sh prints the SHA-256 of dist/ and of everything it is built from, in
# sha256sum's format. build.sh keeps the list in dist/SHA256SUMS; the Go test
# of this folder checks it, so that an input changed without a rebuild, or a
# hand-edited bundle, fails go test.
set -euo pipefail
cd "$(dirname "$0")"
sha256sum build.sh finish.mjs sums.sh package.json package-lock.json $(find src dist -type f ! -name SHA256SUMS | LC_ALL=C sort)
