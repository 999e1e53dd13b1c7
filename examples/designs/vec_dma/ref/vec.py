#!/usr/bin/python3
"""The vec_dma reference: y[i] = clamp((a * x[i] + b) >> s, -128, 127) over LEN signed 8-bit
elements of the initial memory starting at byte SRC_OFFSET. Writes the LEN result bytes.
Usage: vec.py INIT EXPECTED SRC_OFFSET LEN A B S"""
import sys

init, expected = sys.argv[1], sys.argv[2]
off, n, a, b, s = (int(v, 0) for v in sys.argv[3:8])
x = open(init, "rb").read()[off:off + n]
if len(x) != n:
    sys.exit(f"vec.py: {init} holds {len(x)} bytes from offset {off}, {n} needed")
out = bytearray()
for v in x:
    v = v - 256 if v > 127 else v
    y = (a * v + b) >> s  # Python's >> floors, as the RTL's arithmetic shift does
    out.append(max(-128, min(127, y)) & 0xFF)
open(expected, "wb").write(bytes(out))
