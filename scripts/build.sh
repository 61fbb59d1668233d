#!/usr/bin/env bash
# Builds dist/ when it is stale, once, however many processes ask at the same moment
# (`npm start`, `start:api` and `start:worker` all call it): they queue on one lock, the
# first compiles, the others find dist/ current. `tsc -b` compares the sources with
# dist/.tsbuildinfo and compiles only what changed; with nothing changed it takes under a
# second. Deleting dist/ deletes the build info with it, so the next run builds everything.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
node scripts/check-node.js
mkdir -p node_modules/.cache
# flock(1): the kernel drops the lock when its holder exits, so a killed build leaves no stale lock.
exec 9>node_modules/.cache/trading-api-build.lock
flock 9
node_modules/.bin/tsc -b tsconfig.build.json
# The stored functions' bodies are read at migration time from beside the compiled loader.
cp src/db/functions/*.sql dist/db/functions/
