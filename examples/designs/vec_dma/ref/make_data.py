#!/usr/bin/python3
"""Writes data/ddr.bin, the vec_dma example's initial memory: 680 bytes from a fixed LCG, so the
file is reproducible (the vector is the last 512). Usage: make_data.py OUTPUT"""
import sys

x = 12345
out = bytearray()
for _ in range(680):
    x = (1103515245 * x + 12345) % (1 << 31)
    out.append((x >> 16) & 0xFF)
open(sys.argv[1], "wb").write(bytes(out))
