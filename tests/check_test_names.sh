#!/usr/bin/env bash
# ctest splits a discovered test's name at ';', so a Catch2 test case whose name holds one runs
# as two ctest tests that each match nothing and pass without running an assertion. Fail on any.
set -euo pipefail
if grep -rnE 'TEST_CASE\("[^"]*;' "$1"; then
  echo "test case names above contain ';' (ctest would run nothing for them)" >&2
  exit 1
fi
