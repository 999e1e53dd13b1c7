#!/usr/bin/python3
"""Figures of the imported models for docs/performance.md: runs `bud run MODEL.onnx --json`
and `bud import MODEL.onnx --json` and prints one Markdown table row per model.

Usage: /usr/bin/python3 examples/onnx/figures.py BUD_BINARY [MODEL.onnx ...]

% of peak = model MACs / (NPU cycles x 64): model MACs are the network's own multiply-accumulates
on the NPU (Conv: output elements x C_in/group x kH x kW; Gemm/MatMul with constant B: M x K x N;
average pools count their window), from ONNX shape inference; host layers are not counted. The
RTL's `macs_useful` (MAC util) also counts the zero blocks of grouped convs' block-diagonal
weights and the identity GEMMs of adds."""
import json
import subprocess
import sys

import onnx
from onnx import shape_inference


def model_macs(path):
    m = shape_inference.infer_shapes(onnx.load(path))
    shapes = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        shapes[vi.name] = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    inits = {t.name: list(t.dims) for t in m.graph.initializer}
    # Shape inference stops at ops of other domains (com.microsoft Gelu): carry shapes on.
    for n in m.graph.node:
        if n.output[0] in shapes and all(shapes[n.output[0]]):
            continue
        if n.op_type in ("Gelu", "Add", "LayerNormalization", "Relu") and n.input[0] in shapes:
            shapes[n.output[0]] = shapes[n.input[0]]
        elif n.op_type == "Gemm" and n.input[0] in shapes:
            w = inits[n.input[1]]
            shapes[n.output[0]] = shapes[n.input[0]][:-1] + [w[1]]
    macs = 0
    for n in m.graph.node:
        out = shapes.get(n.output[0])
        if n.op_type in ("Conv", "QLinearConv"):
            w = inits[n.input[3 if n.op_type == "QLinearConv" else 1]]
            size = 1
            for d in out:
                size *= d
            macs += size * w[1] * w[2] * w[3]
        elif n.op_type in ("Gemm", "MatMul", "QLinearMatMul"):
            b = n.input[3 if n.op_type == "QLinearMatMul" else 1]
            if b in inits:
                a = shapes[n.input[0]]
                k = a[-1]
                rows = 1
                for d in a[:-1]:
                    rows *= d
                nn = inits[b][0] if any(x.name == "transB" and x.i for x in n.attribute) else inits[b][1]
                macs += rows * k * nn
            elif out and n.input[0] in shapes:
                # Activation x activation (attention): rows x K x N of the output.
                a = shapes[n.input[0]]
                rows = 1
                for d in a[:-1]:
                    rows *= d
                macs += rows * a[-1] * out[-1]
        elif n.op_type in ("GlobalAveragePool",):
            i = shapes[n.input[0]]
            macs += i[1] * i[2] * i[3]
    return macs


def main():
    bud = sys.argv[1]
    models = sys.argv[2:] or [f"examples/onnx/{m}.onnx" for m in
                              ("resnet_tiny", "mobilenet_tiny", "transformer_tiny", "mha_tiny",
                               "qlinear_tiny")]
    print("| model | layers (host) | commands | NPU cycles | host cycles (share) | MAC util (RTL) "
          "| % of peak (model MACs) | quant. error (rel. RMS) |")
    print("|---|---|---|---|---|---|---|---|")
    for path in models:
        run = json.loads(subprocess.run([bud, "run", path, "--json"], capture_output=True,
                                        text=True, check=True).stdout)
        imp = json.loads(subprocess.run([bud, "import", path, "--json"], capture_output=True,
                                        text=True, check=True).stdout)
        assert run["passed"], path
        macs = model_macs(path)
        peak = 100.0 * macs / (run["cycles"] * 64)
        print(f"| {path.split('/')[-1]} | {imp['layers']} ({len(imp['host_layers'])}) | "
              f"{run['commands']} | {run['cycles']:,} | {run['host_cycles']:,} "
              f"({100 * run['host_share']:.1f}%) | {100 * run['mac_utilization']:.1f}% | "
              f"{peak:.1f}% ({macs:,}) | {100 * imp['quant_relative_error']:.2f}% |")


if __name__ == "__main__":
    main()
