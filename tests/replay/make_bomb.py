#!/usr/bin/env python3
# Usage: make_bomb.py OUT.bpk (needs the zstd command). For docs/performance.md, issue 12.
# Writes bomb.bpk: a valid-CRC packet whose chunk list and checkpoint claim 1.5 GiB, with a real
# zstd frame of 1.5 GiB of zeros (a decompression bomb).
import struct, subprocess, sys
def varint(v):
    out = b''
    while True:
        b = v & 0x7f; v >>= 7
        if v: out += bytes([b | 0x80])
        else: return out + bytes([b])
def field(num, wt, payload):
    key = varint((num << 3) | wt)
    if wt == 0: return key + varint(payload)
    if wt == 1: return key + struct.pack('<Q', payload)
    if wt == 2: return key + varint(len(payload)) + payload
def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xffffffff
def frame(kind, payload):
    h = struct.pack('<IHH', len(payload), kind, 0)
    return h + struct.pack('<I', crc32c(h + payload)) + payload
size = 1536 << 20
z = subprocess.run(['bash', '-c', f'head -c {size} /dev/zero | zstd -3 -c'], capture_output=True).stdout
n = size // 32768
memory = field(1, 0, 4 << 30)
header = field(1, 0, 1) + field(3, 2, b'x') + field(10, 2, memory)
ids = b''.join(struct.pack('<Q', i + 1) for i in range(n))
sizes = b''.join(varint(32768) for _ in range(n))
chunks = field(1, 2, ids) + field(2, 2, sizes) + field(3, 2, z)
cp = field(1, 0, 0) + field(2, 0, size) + field(3, 2, ids) + field(4, 1, 0)
fh = b'\x89BUDPKT\n' + struct.pack('<HH', 1, 0)
fh += struct.pack('<I', crc32c(fh))
open(sys.argv[1], 'wb').write(fh + frame(1, header) + frame(2, chunks) + frame(3, cp))
