#!/usr/bin/env bash
# Attention on the NPU (issue 15, docs/performance.md "Attention on the NPU"): each model (single
# head: transformer_tiny, bert_attention; multi-head: mha_tiny, bert_mha) imported
# with its activation x activation MatMuls on the NPU (the default) and on the host
# (`--host-attention`), side by side in one run, both checked bit-exactly on the RTL: NPU cycles,
# host-charged cycles, end-to-end cycles (NPU + host), the host's share, commands and host layers,
# and the output's top-1 agreement with the ONNX fp32 network.
#   tests/bench/attention_bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud=$(cd "$build" && pwd)/bud
cmake --build "$build" --target bud -j "$(nproc)" >/dev/null
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tiny"
"$py" "$root/examples/onnx/gen_models.py" "$tmp/tiny" --full "$tmp" >/dev/null

figures() {  # figures MODEL.onnx [--host-attention] -> "npu host total share commands hosts top1"
  "$bud" import "$1" ${2:+"$2"} --json -o "$tmp/w.textpb" >"$tmp/imp.json"
  "$bud" run "$tmp/w.textpb" --json >"$tmp/run.json"
  "$py" - "$tmp/imp.json" "$tmp/run.json" <<'PY'
import json, sys
imp = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
if not r["passed"]:
    sys.exit("a run failed its checks")
npu, host = r["cycles"], r["host_cycles"]
print(npu, host, npu + host, "%.1f" % (100 * host / (npu + host)), r["commands"],
      len(imp["host_layers"]), "%.1f" % (100 * imp["agreement"]["top1"]))
PY
}

echo "| model | attention on | NPU cycles | host cycles | end-to-end | host share | commands | host layers | top-1 vs fp32 |"
echo "|---|---|---|---|---|---|---|---|---|"
for m in "$root/examples/onnx/transformer_tiny.onnx" "$root/examples/onnx/mha_tiny.onnx" \
  "$tmp/bert_attention.onnx" "$tmp/bert_mha.onnx"; do
  name=$(basename "$m" .onnx)
  for mode in host npu; do
    read -r npu host total share cmds hosts top1 <<<"$(figures "$m" "$([[ $mode == host ]] && echo --host-attention)")"
    echo "| $name | $mode | $npu | $host | $total | $share% | $cmds | $hosts | $top1% |"
  done
done
