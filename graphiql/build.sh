#!/usr/bin/env bash
# build.sh rebuilds dist/ (the GraphiQL page's script and style sheet, which
# the Go binary embeds) from package-lock.json and src/, and records the
# hashes of inputs and outputs in dist/SHA256SUMS (see sums.sh). It needs
# npm and its registry; go build needs neither.
set -euo pipefail
cd "$(dirname "$0")"

npm ci --no-audit --no-fund --ignore-scripts
rm -rf dist.tmp
mkdir dist.tmp
./node_modules/.bin/esbuild src/index.jsx \
	--bundle --minify --format=iife --target=es2020 \
	--jsx=automatic --define:process.env.NODE_ENV='"production"' \
	--legal-comments=none --charset=utf8 \
	--outdir=dist.tmp --entry-names=graphiql --metafile=dist.tmp/meta.json
node finish.mjs dist.tmp
rm -rf dist
mv dist.tmp dist
./sums.sh > dist/SHA256SUMS
ls -l dist
