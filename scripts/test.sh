#!/usr/bin/env bash
# `npm test`: every test file, two at a time, then the timing lane: the tests that measure the
# event loop in their own process, one at a time in a fresh jest worker, whose heap holds
# nothing of the files before it (a large heap's collection work lands in the turns measured).
# With arguments, jest runs just what they name, from either lane.
set -euo pipefail
if [ "$#" -gt 0 ]; then
  JEST_LANE=all exec npx jest "$@"
fi
npx jest
JEST_LANE=timing npx jest --maxWorkers=1
