#!/usr/bin/env bash
# Slurm end to end against a serial replay, for docs/performance.md ("Corpora on Slurm and the
# evidence report"): a corpus of 50 packets (the build's 4-packet corpus copied: 12 copies of each
# and 2 more, so 3 in 4 reproduce a symptom) submitted with `bud corpus submit --slurm` to the
# single-node cluster of tests/corpus/slurm_e2e.sh (which starts and stops it, as root), once with
# one array task per packet and once with 2 tasks of 25 packets; against `bud replay DIR --junit`
# (serial, -j 1) and `-j 2` on the same machine. Each Slurm figure is from submit until the merge
# job left the queue, as slurm_e2e.sh prints it; each run also checks the merged report against
# the serial one.
#   tests/bench/slurm_bench.sh [BUILD_DIR]     (as root, with slurm-wlm and munge installed)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$build/bud"
source "$root/tests/bench/lib.sh"
src="$build/tests/replay/corpus"
[ -d "$src" ] || { echo "no $src: build the replay_corpus target first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/corpus50"
n=0
for copy in $(seq -w 0 12); do
  for p in "$src"/*.bpk; do
    [ "$n" -lt 50 ] || break
    cp "$p" "$tmp/corpus50/c$copy-$(basename "$p")"
    n=$((n + 1))
  done
done
echo "## Slurm end to end, a corpus of $n packets ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
for shards in "" 2; do
  out=$(BUD_SLURM_SHARDS=$shards "$root/tests/corpus/slurm_e2e.sh" "$bud" "$tmp/corpus50" \
    "$tmp/work${shards:-all}" 2>&1) || { echo "$out" >&2; exit 1; }
  echo "$out" | grep -E "^slurm_e2e: (PASS|corpus of)" | sed "s/^/shards=${shards:-$n}: /"
done
for j in 1 2; do
  printf "%-44s %8s s\n" "bud replay corpus50 -j $j --junit (serial host)" \
    "$(secs "$bud" replay "$tmp/corpus50" -j "$j" --junit "$tmp/serial.xml")"
done
