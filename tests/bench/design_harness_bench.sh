#!/usr/bin/env bash
# Simulated cycles per second of the fir_stream example under a hand-written testbench loop,
# design/DesignHarness and design/DesignEmulator, side by side in one run (docs/performance.md,
# "Design files"). Usage: tests/bench/design_harness_bench.sh [BUILD_DIR] [REPS]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
cmake --build "$build" --target bud-bench-design > /dev/null
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
"$build/tests/design/bud-bench-design" "$root" "$cache" "${2:-20}"
