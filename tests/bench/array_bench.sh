#!/usr/bin/env bash
# Figures of docs/performance.md "Array sizes (issue 15)": per MAC-array variant, the Verilator
# build time of its model, simulation speed (cycles/s and MACs simulated/s) and MAC utilization on
# the built-ins and the ONNX production models, each single-threaded and with Verilator
# --threads 2. Wall-clock figures for the docs only, never a test.
#   tests/bench/array_bench.sh          (make array-bench)
# Environment: ARRAY_VARIANTS (default "npu8 npu16 npu32"), ARRAY_THREADS (default "1 2"),
# ARRAY_BUILD (default build: reconfigured for each thread count, left at --threads 1 with every
# variant; the bud of each thread count is kept as $ARRAY_BUILD/bud-t<N>),
# ARRAY_WORKLOADS (default: the built-ins and examples/onnx/{resnet,mobilenet,transformer}_tiny),
# ARRAY_PHASE (all, build: only the build-time table and bud-t<N>, run: only the speed table with
# the bud-t<N> a build phase left).
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
variants=${ARRAY_VARIANTS:-npu8 npu16 npu32}
threads=${ARRAY_THREADS:-1 2}
b=${ARRAY_BUILD:-build}
workloads=${ARRAY_WORKLOADS:-gemm_small mlp conv compute_bound mem_bound
  examples/onnx/resnet_tiny.onnx examples/onnx/mobilenet_tiny.onnx
  examples/onnx/transformer_tiny.onnx}
list=$(echo "$variants" | tr ' ' ';')
phase=${ARRAY_PHASE:-all}

if [ "$phase" != run ]; then
echo "## Verilator build time per array variant ($(nproc) cores, ccache off, model library only)"
echo
printf "%-8s %-8s %10s\n" variant threads seconds
for t in $threads; do
  cmake -S . -B "$b" -DBUD_NPU_VARIANTS="$list" -DBUD_NPU_THREADS="$t" >/dev/null
  for v in $variants; do
    target=bud_npu_model_$v
    [ "$v" = npu8 ] && target=bud_npu_model
    cmake --build "$b" --target bud_npu_facts_gen >/dev/null
    # Clean only this model (its Verilator output and objects), then time Verilate + compile.
    rm -rf "$b/rtl/CMakeFiles/$target.dir" "$b/rtl/lib$target.a"
    cmake -S . -B "$b" >/dev/null
    s=$(CCACHE_DISABLE=1 secs cmake --build "$b" --target "$target" -j "$(nproc)")
    printf "%-8s %-8s %10.1f\n" "$v" "$t" "$s"
  done
  cmake --build "$b" --target bud -j "$(nproc)" >/dev/null
  cp "$b/bud" "$b/bud-t$t"
done
cmake -S . -B "$b" -DBUD_NPU_THREADS=1 >/dev/null
echo
fi
[ "$phase" = build ] && exit 0

echo "## Speed and utilization per variant (one bud run each; wall time includes the run's"
echo "## fixed cost: lowering, reference, golden model)"
echo
printf "%-16s %-7s %3s %10s %8s %10s %10s %6s\n" workload variant thr cycles seconds Mcycles/s GMACs/s util
for w in $workloads; do
  for v in $variants; do
    for t in $threads; do
      out=$(mktemp)
      t0=$(now)
      "$b/bud-t$t" run "$w" --config "$v" --json >"$out" 2>/dev/null || true
      t1=$(now)
      python3 - "$out" "$t0" "$t1" "$w" "$v" "$t" <<'PY'
import json, sys
path, t0, t1, w, v, t = sys.argv[1:]
d = json.load(open(path))
secs = float(t1) - float(t0)
cyc = d.get("cycles", 0)
macs = d.get("counters", {}).get("macs_issued", 0)
name = w.split("/")[-1].replace(".onnx", "")
ok = "" if d.get("passed") else " FAIL"
print(f"{name:<16} {v:<7} {t:>3} {cyc:>10} {secs:>8.2f} {cyc / secs / 1e6:>10.3f} "
      f"{macs / secs / 1e9:>10.3f} {100 * d.get('mac_utilization', 0):>5.1f}%{ok}")
PY
      rm -f "$out"
    done
  done
done
