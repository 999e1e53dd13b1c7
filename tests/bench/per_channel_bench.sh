#!/usr/bin/env bash
# Per-channel requantisation figures for docs/performance.md ("Per-channel requantisation (issue
# 15)"): each generated float model imported per tensor and per channel, side by side in one run -
# the worst layer's SNR and the output's top-1 agreement against the ONNX fp32 network (`bud
# import --json`), then both workloads on the RTL (`bud run --json`, checked bit-exactly): NPU
# cycles, commands, and the cost of the scale entries (per-channel / per-tensor cycles).
#   tests/bench/per_channel_bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
bud="$build/bud"
cmake --build "$build" --target bud -j "$(nproc)" >/dev/null
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

quality() {  # quality MODEL [--per-channel] -> "worst_layer worst_snr top1"; writes $tmp/w.textpb
  "$bud" import "examples/onnx/$1.onnx" ${2:+"$2"} --json -o "$tmp/w.textpb" | "$py" -c '
import json, sys
r = json.load(sys.stdin)
worst = min(r["layer_quality"], key=lambda q: q["snr_db"])
print(worst["layer"], "%.1f" % worst["snr_db"], "%.1f" % (100 * r["agreement"]["top1"]))'
}
run() {  # run TEXTPB -> "cycles commands PASS|FAIL"
  "$bud" run "$1" --json | "$py" -c '
import json, sys
r = json.load(sys.stdin)
print(r["cycles"], r["commands"], "PASS" if r["passed"] else "FAIL")'
}

echo "| model | worst layer | SNR per tensor | SNR per channel | top-1 per tensor | top-1 per channel | cycles per tensor | cycles per channel | ratio | commands (t / c) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in outlier_tiny resnet_tiny mobilenet_tiny transformer_tiny; do
  read -r layer snr_t top_t <<<"$(quality "$m")"
  read -r c_t n_t ok_t <<<"$(run "$tmp/w.textpb")"
  read -r _ _ top_c <<<"$(quality "$m" --per-channel)"
  # The per-channel SNR of the layer that is worst per tensor.
  snr_c=$("$bud" import "examples/onnx/$m.onnx" --per-channel --json | "$py" -c '
import json, sys
r = json.load(sys.stdin)
print("%.1f" % next(q["snr_db"] for q in r["layer_quality"] if q["layer"] == sys.argv[1]))' "$layer")
  read -r c_c n_c ok_c <<<"$(run "$tmp/w.textpb")"
  [[ $ok_t == PASS && $ok_c == PASS ]] || { echo "$m: a run failed its checks" >&2; exit 1; }
  awk -v m="$m" -v l="$layer" -v st="$snr_t" -v sc="$snr_c" -v tt="$top_t" -v tc="$top_c" \
      -v ct="$c_t" -v cc="$c_c" -v nt="$n_t" -v nc="$n_c" \
    'BEGIN { printf "| %s | %s | %s dB | %s dB | %s%% | %s%% | %d | %d | %.3f | %d / %d |\n",
             m, l, st, sc, tt, tc, ct, cc, cc / ct, nt, nc }'
done
