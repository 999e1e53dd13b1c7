#!/usr/bin/env bash
# `bud design build` cold (empty cache) and cached, for each example design (docs/performance.md,
# "Design files"). Usage: tests/bench/design_build_bench.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bud="${1:-$root/build}/bud"
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
echo "| design | check s | build cold s | build cached s | model bytes |"
echo "|---|---|---|---|---|"
for f in "$root"/examples/designs/*/*.toml; do
  name=$(basename "$f" .toml)
  t() { local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N); awk "BEGIN { print $e - $s }"; }
  check=$(t "$bud" design check "$f")
  cold=$(t "$bud" design build --cache "$cache" "$f")
  warm=$(t "$bud" design build --cache "$cache" "$f")
  bytes=$(stat -c %s "$cache"/"$name"-*/model.so)
  printf '| %s | %.2f | %.2f | %.2f | %s |\n' "$name" "$check" "$cold" "$warm" "$bytes"
done
