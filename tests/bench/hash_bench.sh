#!/usr/bin/env bash
# Two bud binaries side by side, alternating (docs/performance.md, "One hash"): `bud run` and
# `bud run --record` of long_gemm at the default and at a dense digest/checkpoint interval, where
# hashing (state digests, page hashes, chunk ids, CRCs) is most of the recording cost.
#   tests/bench/hash_bench.sh OLD_BUD NEW_BUD      Environment: REPS (default 3)
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"
old=$1; new=$2; reps=${REPS:-3}
work="$(cd "$(dirname "$0")/../.." && pwd)/tests/replay/data/long_gemm.textpb"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for args in "" "--digest-interval 8192 --checkpoint-interval 65536"; do
  o=(); n=(); op=(); np=()
  for ((i = 0; i < reps; i++)); do
    o+=("$(secs "$old" run "$work" --record "$tmp/o.bpk" $args)")
    n+=("$(secs "$new" run "$work" --record "$tmp/n.bpk" $args)")
    op+=("$(secs "$old" run "$work")")
    np+=("$(secs "$new" run "$work")")
  done
  printf 'record %-50s old %s s  new %s s | plain old %s s new %s s | bytes old %s new %s\n' "[$args]" \
    "$(printf '%s\n' "${o[@]}" | med)" "$(printf '%s\n' "${n[@]}" | med)" \
    "$(printf '%s\n' "${op[@]}" | med)" "$(printf '%s\n' "${np[@]}" | med)" \
    "$(stat -c %s "$tmp/o.bpk")" "$(stat -c %s "$tmp/n.bpk")"
done
