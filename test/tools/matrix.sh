#!/usr/bin/env bash
# `npm run test:matrix`: the whole n8n matrix in one command. Installs each release into the cache
# (about 5–8 minutes each the first time), runs the reduced real-n8n scenario (test/e2e/matrix) on
# n8n 1.123.81 / Node 22, on the oldest 2.x (2.0.0) and on today's pin (2.41.1), the in-process
# suite on the 1.x engine, then renders docs/compatibility.md from the results. `.ci/run` runs the
# 1.x part only; this is the rest.
set -uo pipefail
cd "$(dirname "$0")/../.."
failed=0
for version in 1.123.81 2.0.0 2.41.1; do
	npm run --silent install:n8n -- "$version" || { failed=1; continue; }
	N8N_MATRIX_VERSION="$version" npm run --silent test:n8n-1x || failed=1
done
npm run --silent test:engine-1x || failed=1
test/tools/with-node24 tsx test/tools/compatibility-table.ts || failed=1
exit "$failed"
