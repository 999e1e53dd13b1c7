#!/usr/bin/python3
"""The fir_stream reference: reads signed 8-bit samples, writes the 4-tap FIR sums as signed
32-bit little-endian words. Usage: fir.py INPUT EXPECTED [C0 C1 C2 C3]"""
import struct
import sys

taps = [int(c) for c in sys.argv[3:7]] or [3, -5, 7, 2]
x = [b - 256 if b > 127 else b for b in open(sys.argv[1], "rb").read()]
with open(sys.argv[2], "wb") as out:
    for n in range(len(x)):
        y = sum(taps[k] * x[n - k] for k in range(4) if n - k >= 0)
        out.write(struct.pack("<i", y))
