#!/usr/bin/env bash
# Runs the market-order and money-transfer integration tests through Prism's validation proxy
# (@stoplight/prism-cli, a pinned devDependency): each test app is reached through
# `prism proxy generated/openapi.json <app>`, and a request or an answer that breaks the
# document fails the test that sent it (test/helpers/prism-proxy.ts says exactly when).
# CI runs it after the main suite; run it by hand with `bash scripts/prism-check.sh`
# (Postgres and Redis as for npm test).
set -euo pipefail
cd "$(dirname "$0")/.."

# The document of this checkout, written fresh, so the check never runs against a stale file.
npx tsx scripts/openapi.ts

TEST_PRISM_DOCUMENT="$PWD/generated/openapi.json" JEST_WORKERS=1 npx jest \
  test/integration/trading/market-orders.test.ts \
  test/integration/money/transfers.test.ts
