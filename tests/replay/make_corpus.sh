#!/usr/bin/env bash
# Generates the replay corpus the tests replay (built by CMake target replay_corpus):
# packets of runs with real symptoms plus a passing one. Usage: make_corpus.sh BUD OUTDIR
set -euo pipefail
bud=$1
out=$2
rm -rf "$out"
mkdir -p "$out"
rec() {  # rec NAME EXPECTED_EXIT ARGS...: record, insisting on the run's exit status
  local name=$1 want=$2
  shift 2
  local rc=0
  "$bud" run "$@" --checkpoint-interval 1024 --digest-interval 256 --record "$out/$name.bpk" \
    >/dev/null 2>"$out/$name.log" || rc=$?
  if [ "$rc" != "$want" ]; then
    echo "make_corpus: $name: bud run exited $rc, expected $want" >&2
    cat "$out/$name.log" >&2
    exit 1
  fi
  rm -f "$out/$name.log"
}
# L->C tokens never arrive: the compute queue starves and the watchdog reports a hang.
rec hang_starved_queue 1 gemm_small --fault 'stuck:tokens[0][0]=0@100' --hang-cycles 3000 \
  --annotate "compute starved of load tokens"
# An input byte flipped in DRAM: outputs differ from the golden model.
rec mismatch_memflip 1 gemm_small --fault 'memflip:dram:0x10000[3]@10' \
  --annotate "bit 3 of an input byte"
# A lost DRAM response on a slow bursty memory: hang.
rec hang_dram_drop 1 mlp --fault 'dram-drop@2000' --mem-bursty --mem-latency 90 --hang-cycles 4000
# A clean run, to show that passing packets stay passing.
rec clean_mlp 0 mlp --seed 3 --mem-seed 7
