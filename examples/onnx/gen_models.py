#!/usr/bin/python3
"""Generates the ONNX models bud's import is tested and benchmarked on (docs/import.md).

Reduced-size production shapes, float32 with weights from a fixed numpy seed:
  resnet_tiny.onnx       ResNet-18-style: stem conv, max pool, 4 stages x 2 basic blocks
                         (3x3 convs, identity and 1x1 stride-2 downsample shortcuts), global
                         average pool, fully connected
  mobilenet_tiny.onnx    MobileNetV2-style: inverted residual blocks (1x1 expand, 3x3 depthwise,
                         1x1 linear projection, ReLU6), residual adds, global average pool, FC
  transformer_tiny.onnx  one encoder block: Q/K/V projections, Q.K^T, scale, softmax, .V,
                         output projection, residual + LayerNorm, FFN with 4x expansion and GELU,
                         residual + LayerNorm (single head)
  mha_tiny.onnx          a multi-head encoder block as frameworks export it: Q/K/V projections
                         (MatMul + bias Add), Reshape to [S, H, dh] and Transpose into 4 heads
                         (K transposed to [H, dh, S]), batched Q.K^T, scale (Div), softmax,
                         batched .V, Transpose and Reshape back to [S, D], output projection,
                         residual + LayerNorm
  qlinear_tiny.onnx      an already-quantised model: QuantizeLinear, QLinearConv,
                         DequantizeLinear, GlobalAveragePool, QLinearMatMul
  lenet_tiny.onnx        LeNet-style, as TF and PyTorch export it: a stride-2 conv with
                         TF-style SAME padding (pads [0, 0, 1, 1]), BatchNormalization after each
                         conv, max pool, Flatten of the 4x4x12 image into a dense head, Sigmoid
                         (multi-label) output
  inception_tiny.onnx    an Inception block: 1x1, 3x3 and pool-projection branches concatenated
                         along channels (Concat), BatchNormalization after the Concat (not
                         foldable: a depthwise 1x1 conv) and after a 1x1 conv (folded), global
                         average pool, FC
  outlier_tiny.onnx      three dense layers whose middle one has a few weights 300x the rest:
                         its per-tensor int8 scale flushes the ordinary weights, so that layer
                         alone loses quality (the precision guardrail's test case)
and, with --errors DIR, the malformed/unsupported models of tests/onnx (and mha_batch.onnx, the
multi-head block with a leading batch dimension); with --full DIR, one
full-size layer of each network for the benchmarks (tests/bench/full_layers_bench.sh; generated
when needed, not checked in):
  resnet18_conv.onnx     ResNet-18 conv2_x: 3x3 conv 64 -> 64 at 56x56, ReLU (115.6M MACs)
  mobilenetv2_dw.onnx    MobileNetV2 block 2 depthwise: 3x3 depthwise at 112x112x96, stride 2,
                         ReLU6 (2.7M MACs; run as a block-diagonal dense conv)
  bert_ffn.onnx          BERT-base FFN: 128 tokens, 768 -> 3072, GELU (host), 3072 -> 768
                         (604M MACs)
  bert_attention.onnx    one BERT-base attention head: 128 tokens, Q/K/V 768 -> 64, Q.K^T,
                         scale, softmax (host), .V (21.0M MACs; the products on the NPU)
  bert_mha.onnx          BERT-base multi-head self-attention: 128 tokens, 12 heads of 64, the
                         mha_tiny graph at full size (327M MACs)

Run with Debian's python3-onnx:  /usr/bin/python3 examples/onnx/gen_models.py examples/onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]


class Graph:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def const(self, arr, base="w"):
        nm = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def node(self, op, inputs, base=None, domain=None, **attrs):
        out = self.name(base or op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, domain=domain, **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, group=1):
        fan_in = cin // group * k * k
        w = (self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan_in))
        b = self.rng.standard_normal(cout) * 0.05
        return self.node("Conv", [x, self.const(w.astype(np.float32)),
                                  self.const(b.astype(np.float32), "b")], "conv",
                         kernel_shape=[k, k], strides=[stride, stride],
                         pads=[k // 2] * 4, group=group)

    def gemm(self, x, k, n, scale=None):
        w = self.rng.standard_normal((k, n)) * (scale or np.sqrt(1.0 / k))
        b = self.rng.standard_normal(n) * 0.05
        return self.node("Gemm", [x, self.const(w.astype(np.float32)),
                                  self.const(b.astype(np.float32), "b")], "fc")

    def model(self, name, x_name, x_shape, out, out_shape):
        g = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info(x_name, TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)], self.inits)
        m = helper.make_model(g, opset_imports=OPSET, producer_name="bud gen_models.py")
        m.ir_version = 8
        return m


def resnet_tiny():
    g = Graph(18)
    x = g.conv("x", 3, 8, 3, stride=2)           # 32x32 -> 16x16
    x = g.node("Relu", [x])
    x = g.node("MaxPool", [x], "pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)  # 8x8
    c = 8
    for stage, cout in enumerate([8, 16, 24, 32]):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            y = g.node("Relu", [g.conv(x, c, cout, 3, stride)])
            y = g.conv(y, cout, cout, 3)
            skip = x if stride == 1 and c == cout else g.conv(x, c, cout, 1, stride)
            x = g.node("Relu", [g.node("Add", [y, skip])])
            c = cout
    x = g.node("GlobalAveragePool", [x], "gap")
    x = g.node("Flatten", [x])
    x = g.gemm(x, c, 10)
    return g.model("resnet_tiny", "x", [1, 3, 32, 32], x, [1, 10])


def mobilenet_tiny():
    g = Graph(2)
    relu6 = lambda t: g.node("Clip", [t, g.const(np.float32(0), "lo"), g.const(np.float32(6), "hi")],
                             "relu6")
    x = relu6(g.conv("x", 3, 8, 3, stride=2))     # 24x24 -> 12x12
    c = 8
    # (expansion, c_out, stride)
    for t, cout, stride in [(1, 8, 1), (4, 12, 2), (4, 12, 1), (4, 16, 2)]:
        h = x
        if t != 1:
            h = relu6(g.conv(h, c, c * t, 1))
        h = relu6(g.conv(h, c * t, c * t, 3, stride, group=c * t))   # depthwise
        h = g.conv(h, c * t, cout, 1)                                 # linear projection
        x = g.node("Add", [h, x]) if stride == 1 and c == cout else h
        c = cout
    x = relu6(g.conv(x, c, 64, 1))
    x = g.node("GlobalAveragePool", [x], "gap")
    x = g.node("Flatten", [x])
    x = g.gemm(x, 64, 10)
    return g.model("mobilenet_tiny", "x", [1, 3, 24, 24], x, [1, 10])


def attention_head(g, x, d, dh):
    # Q, K, V projections of x (d -> dh), scores Q . K^T / sqrt(dh), softmax, P . V.
    q = g.gemm(x, d, dh)
    k = g.gemm(x, d, dh)
    v = g.gemm(x, d, dh)
    kt = g.node("Transpose", [k], "kt", perm=[1, 0])
    scores = g.node("MatMul", [q, kt], "qk")
    scores = g.node("Mul", [scores, g.const(np.float32(1 / np.sqrt(dh)), "scale")], "scaled")
    p = g.node("Softmax", [scores], "softmax", axis=-1)
    return g.node("MatMul", [p, v], "av")


def transformer_tiny(s=16, d=32):
    g = Graph(7)

    def layer_norm(t):
        return g.node("LayerNormalization",
                      [t, g.const((1 + 0.1 * g.rng.standard_normal(d)).astype(np.float32), "gamma"),
                       g.const((0.1 * g.rng.standard_normal(d)).astype(np.float32), "beta")],
                      "ln", axis=-1, epsilon=1e-5)

    a = attention_head(g, "x", d, d)
    o = g.gemm(a, d, d)
    x1 = layer_norm(g.node("Add", ["x", o], "res"))
    f = g.gemm(x1, d, 4 * d)
    f = g.node("Gelu", [f], "gelu", domain="com.microsoft")
    f = g.gemm(f, 4 * d, d)
    out = layer_norm(g.node("Add", [x1, f], "res"))
    return g.model("transformer_tiny", "x", [s, d], out, [s, d])


def mha_tiny(s=16, d=32, heads=4, name="mha_tiny", seed=4, batch=False):
    # batch: with a leading batch dimension of 1 throughout ([1, S, D], [1, H, S, dh]), the
    # output projection's bias an Add after it (tests/onnx/data/mha_batch.onnx)
    g = Graph(seed)
    dh = d // heads
    b1 = [1] if batch else []
    p = (lambda *perm: [0] + [i + 1 for i in perm]) if batch else (lambda *perm: list(perm))

    def proj(x):  # MatMul + bias Add, as PyTorch exports nn.Linear
        w = g.rng.standard_normal((d, d)) * np.sqrt(1.0 / d)
        b = g.rng.standard_normal(d) * 0.05
        y = g.node("MatMul", [x, g.const(w.astype(np.float32))], "proj")
        return g.node("Add", [y, g.const(b.astype(np.float32), "b")], "bias")

    split = g.const(np.array(b1 + [s, heads, dh], dtype=np.int64), "shape")
    q = g.node("Transpose", [g.node("Reshape", [proj("x"), split], "split")], "heads", perm=p(1, 0, 2))
    k = g.node("Transpose", [g.node("Reshape", [proj("x"), split], "split")], "heads_t", perm=p(1, 2, 0))
    v = g.node("Transpose", [g.node("Reshape", [proj("x"), split], "split")], "heads", perm=p(1, 0, 2))
    scores = g.node("MatMul", [q, k], "qk")                      # [H, S, S]
    scores = g.node("Div", [scores, g.const(np.float32(np.sqrt(dh)), "sqrt_dh")], "scaled")
    pr = g.node("Softmax", [scores], "softmax", axis=3 if batch else -1)
    a = g.node("MatMul", [pr, v], "av")                          # [H, S, dh]
    a = g.node("Transpose", [a], "merge", perm=p(1, 0, 2))       # [S, H, dh]
    a = g.node("Reshape", [a, g.const(np.array(b1 + [s, d], dtype=np.int64), "shape")], "merged")
    o = proj(a)
    if batch:
        return g.model(name, "x", [1, s, d], o, [1, s, d])
    x1 = g.node("Add", ["x", o], "res")
    out = g.node("LayerNormalization",
                 [x1, g.const((1 + 0.1 * g.rng.standard_normal(d)).astype(np.float32), "gamma"),
                  g.const((0.1 * g.rng.standard_normal(d)).astype(np.float32), "beta")],
                 "ln", axis=-1, epsilon=1e-5)
    return g.model(name, "x", [s, d], out, [s, d])


def bert_mha():
    return mha_tiny(128, 768, 12, "bert_mha", 12)


def qlinear_tiny():
    g = Graph(5)
    f = lambda v: g.const(np.float32(v), "s")
    z = lambda: g.const(np.int8(0), "zp")
    xs = 1 / 127
    xq = g.node("QuantizeLinear", ["x", f(xs), z()], "xq")
    w1 = g.rng.integers(-60, 61, (16, 8, 3, 3)).astype(np.int8)
    b1 = g.rng.integers(-500, 501, 16).astype(np.int32)
    y1s = 0.05
    y1 = g.node("QLinearConv", [xq, f(xs), z(), g.const(w1), f(0.004), z(), f(y1s), z(), g.const(b1, "b")],
                "qconv", pads=[1] * 4, kernel_shape=[3, 3])
    w2 = g.rng.integers(-90, 91, (16, 16, 1, 1)).astype(np.int8)
    w2s = g.const((0.003 + 0.002 * g.rng.random(16)).astype(np.float32), "s")   # per channel
    y2 = g.node("QLinearConv", [y1, f(y1s), z(), g.const(w2), w2s, g.const(np.zeros(16, np.int8), "zp"),
                                f(0.04), z()], "qconv", kernel_shape=[1, 1])
    d = g.node("DequantizeLinear", [y2, f(0.04), z()], "dq")
    p = g.node("GlobalAveragePool", [d], "gap")
    p = g.node("Flatten", [p])
    pq = g.node("QuantizeLinear", [p, f(0.02), z()], "pq")
    w3 = g.rng.integers(-100, 101, (16, 10)).astype(np.int8)
    y3 = g.node("QLinearMatMul", [pq, f(0.02), z(), g.const(w3), f(0.01), z(), f(0.05), z()], "qmm")
    out = g.node("DequantizeLinear", [y3, f(0.05), z()], "out")
    return g.model("qlinear_tiny", "x", [1, 8, 6, 6], out, [1, 10])


def resnet18_conv():
    g = Graph(56)
    x = g.node("Relu", [g.conv("x", 64, 64, 3)])
    return g.model("resnet18_conv", "x", [1, 64, 56, 56], x, [1, 64, 56, 56])


def mobilenetv2_dw():
    g = Graph(96)
    x = g.conv("x", 96, 96, 3, stride=2, group=96)
    x = g.node("Clip", [x, g.const(np.float32(0), "lo"), g.const(np.float32(6), "hi")], "relu6")
    return g.model("mobilenetv2_dw", "x", [1, 96, 112, 112], x, [1, 96, 56, 56])


def bert_ffn(s=128, d=768):
    g = Graph(768)
    f = g.gemm("x", d, 4 * d)
    f = g.node("Gelu", [f], "gelu", domain="com.microsoft")
    f = g.gemm(f, 4 * d, d)
    return g.model("bert_ffn", "x", [s, d], f, [s, d])


def bert_attention(s=128, d=768, dh=64):
    # One BERT-base attention head at full size: Q, K, V projections of the 768-wide tokens to
    # 64, scores Q . K^T / 8, softmax, P . V.
    g = Graph(64)
    a = attention_head(g, "x", d, dh)
    return g.model("bert_attention", "x", [s, d], a, [s, dh])


def batch_norm(g, x, c):
    scale = 1.0 + 0.1 * g.rng.standard_normal(c)
    bias = 0.1 * g.rng.standard_normal(c)
    mean = 0.1 * g.rng.standard_normal(c)
    var = g.rng.uniform(0.5, 1.5, c)
    return g.node("BatchNormalization",
                  [x] + [g.const(a.astype(np.float32), n)
                         for a, n in [(scale, "gamma"), (bias, "beta"), (mean, "mean"), (var, "var")]],
                  "bn", epsilon=1e-5)


def conv_pads(g, x, cin, cout, k, stride, pads):
    w = g.rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))
    b = g.rng.standard_normal(cout) * 0.05
    return g.node("Conv", [x, g.const(w.astype(np.float32)), g.const(b.astype(np.float32), "b")],
                  "conv", kernel_shape=[k, k], strides=[stride, stride], pads=pads)


def lenet_tiny():
    g = Graph(5)
    x = conv_pads(g, "x", 1, 6, 3, 2, [0, 0, 1, 1])           # 16x16 -> 8x8 (SAME)
    x = g.node("Relu", [batch_norm(g, x, 6)])
    x = g.node("Relu", [batch_norm(g, g.conv(x, 6, 12, 3), 12)])
    x = g.node("MaxPool", [x], "pool", kernel_shape=[2, 2], strides=[2, 2])  # 4x4x12
    x = g.node("Flatten", [x], axis=1)                        # [1, 192], channel-major
    x = g.node("Relu", [g.gemm(x, 192, 32)])
    x = g.node("Sigmoid", [g.gemm(x, 32, 10)])
    return g.model("lenet_tiny", "x", [1, 1, 16, 16], x, [1, 10])


def inception_tiny():
    g = Graph(6)
    x = g.node("Relu", [g.conv("x", 3, 8, 3)])               # 16x16x8
    a = g.node("Relu", [g.conv(x, 8, 8, 1)])
    b = g.node("Relu", [g.conv(x, 8, 8, 3)])
    p = g.node("MaxPool", [x], "pool", kernel_shape=[3, 3], strides=[1, 1], pads=[1] * 4)
    c = g.node("Relu", [g.conv(p, 8, 4, 1)])
    x = g.node("Concat", [a, b, c], "concat", axis=1)         # 16x16x20
    x = g.node("Relu", [batch_norm(g, x, 20)])
    x = g.node("Relu", [batch_norm(g, g.conv(x, 20, 16, 1), 16)])
    x = g.node("GlobalAveragePool", [x], "gap")
    x = g.node("Flatten", [x])
    x = g.gemm(x, 16, 10)
    return g.model("inception_tiny", "x", [1, 3, 16, 16], x, [1, 10])


def outlier_tiny():
    g = Graph(11)
    x = g.node("Relu", [g.gemm("x", 64, 64)])
    w = g.rng.standard_normal((64, 64)) * np.sqrt(1.0 / 64)
    w[g.rng.integers(0, 64, 4), g.rng.integers(0, 64, 4)] *= 300.0
    b = g.rng.standard_normal(64) * 0.05
    x = g.node("Gemm", [x, g.const(w.astype(np.float32)), g.const(b.astype(np.float32), "b")], "fc")
    x = g.gemm(x, 64, 10)
    return g.model("outlier_tiny", "x", [16, 64], x, [16, 10])


def error_models():
    """(file, model) pairs for the error tests, each wrong in one way."""
    out = []
    g = Graph(1)
    y = g.node("Sin", [g.conv("x", 3, 8, 3)], "mystery")
    out.append(("unknown_op.onnx", g.model("unknown_op", "x", [1, 3, 8, 8], y, [1, 8, 8, 8])))
    g = Graph(1)
    y = g.conv("x", 3, 8, 3)
    g.nodes[-1].attribute.append(helper.make_attribute("dilations", [2, 2]))
    out.append(("bad_attribute.onnx", g.model("bad_attribute", "x", [1, 3, 8, 8], y, [1, 8, 4, 4])))
    g = Graph(1)
    y = g.conv("x", 3, 8, 3)
    out.append(("dynamic_shape.onnx", g.model("dynamic_shape", "x", ["N", 3, 8, 8], y, ["N", 8, 8, 8])))
    g = Graph(1)
    y = g.conv("x", 3, 8, 3)
    g.nodes[-1].attribute[2].CopyFrom(helper.make_attribute("pads", [1, 1, 0, 0]))
    out.append(("asym_pads.onnx", g.model("asym_pads", "x", [1, 3, 8, 8], y, [1, 8, 7, 7])))
    # A flattened image read by something other than a dense layer.
    g = Graph(1)
    y = g.node("Softmax", [g.node("Flatten", [g.conv("x", 3, 8, 3)])], "probs")
    out.append(("flatten_softmax.onnx", g.model("flatten_softmax", "x", [1, 3, 8, 8], y, [1, 512])))
    # Heads split straight from the graph input: no projection to split.
    g = Graph(1)
    y = g.node("Reshape", ["x", g.const(np.array([16, 4, 8], dtype=np.int64), "shape")], "split")
    y = g.node("Transpose", [y], "heads", perm=[1, 0, 2])
    out.append(("mha_batch.onnx", mha_tiny(name="mha_batch", batch=True)))
    out.append(("heads_of_input.onnx", g.model("heads_of_input", "x", [16, 32], y, [4, 16, 8])))
    # Heads merged back and added to the input, with no output projection to read them.
    g = Graph(1)
    y = g.node("Reshape", [g.gemm("x", 32, 32), g.const(np.array([16, 4, 8], dtype=np.int64),
                                                        "shape")], "split")
    y = g.node("Transpose", [y], "heads", perm=[1, 0, 2])
    y = g.node("Softmax", [y], "softmax", axis=-1)
    y = g.node("Transpose", [y], "merge", perm=[1, 0, 2])
    y = g.node("Reshape", [y, g.const(np.array([16, 32], dtype=np.int64), "shape")], "merged")
    y = g.node("Add", ["x", y], "res")
    out.append(("merged_heads_added.onnx",
                g.model("merged_heads_added", "x", [16, 32], y, [16, 32])))
    return out


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    for name, fn in [("resnet_tiny", resnet_tiny), ("mobilenet_tiny", mobilenet_tiny),
                     ("transformer_tiny", transformer_tiny), ("qlinear_tiny", qlinear_tiny),
                     ("outlier_tiny", outlier_tiny), ("mha_tiny", mha_tiny),
                     ("lenet_tiny", lenet_tiny), ("inception_tiny", inception_tiny)]:
        onnx.save(fn(), f"{out_dir}/{name}.onnx")
    if "--full" in sys.argv:
        full_dir = sys.argv[sys.argv.index("--full") + 1]
        for name, fn in [("resnet18_conv", resnet18_conv), ("mobilenetv2_dw", mobilenetv2_dw),
                         ("bert_ffn", bert_ffn), ("bert_attention", bert_attention),
                         ("bert_mha", bert_mha)]:
            onnx.save(fn(), f"{full_dir}/{name}.onnx")
    if "--errors" in sys.argv:
        err_dir = sys.argv[sys.argv.index("--errors") + 1]
        for name, m in error_models():
            onnx.save(m, f"{err_dir}/{name}")


if __name__ == "__main__":
    main()
