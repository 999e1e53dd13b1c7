#!/usr/bin/env python3
"""Decodes a bud replay packet with Python's protobuf from replay/packet.proto alone, following
the framing in docs/packets.md, and checks it: magic, version, every record's CRC32C, every
payload decodes as its kind's message, the index lists every record, the trailer points at it.

usage: decode_packet.py PROTO_FILE PACKET [--expect-symptom KIND]
Prints one line per record kind and exits 0, or prints the problem and exits 1.
"""
import importlib
import os
import struct
import subprocess
import sys
import tempfile


def crc32c(data, crc=0):
    table = crc32c.table
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


crc32c.table = _table()


def main():
    proto, packet = sys.argv[1], sys.argv[2]
    expect = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--expect-symptom" else None
    out = tempfile.mkdtemp()
    subprocess.check_call(["protoc", "-I", os.path.dirname(proto), "--python_out", out, proto])
    sys.path.insert(0, out)
    pb = importlib.import_module("packet_pb2")
    kinds = {v.number: v.name for v in pb.RecordKind.DESCRIPTOR.values}
    message_of = {"RECORD_HEADER": pb.Header, "RECORD_CHUNKS": pb.Chunks,
                  "RECORD_CHECKPOINT": pb.Checkpoint, "RECORD_WINDOW": pb.Window,
                  "RECORD_SYMPTOM": pb.Symptom, "RECORD_ANNOTATION": pb.Annotation,
                  "RECORD_RESULT": pb.Result, "RECORD_INDEX": pb.Index,
                  "RECORD_STIMULUS": pb.Stimulus}
    data = open(packet, "rb").read()
    if data[:8] != b"\x89BUDPKT\n":
        sys.exit("bad magic")
    major, minor, hcrc = struct.unpack_from("<HHI", data, 8)
    if hcrc != crc32c(data[:12]):
        sys.exit("file header CRC mismatch")
    if data[-8:] != b"BUDPKEND":
        sys.exit("no trailer")
    (index_at,) = struct.unpack_from("<Q", data, len(data) - 16)
    off, end = 16, len(data) - 16
    seen, counts, header, symptom, index = [], {}, None, None, None
    while off < end:
        length, kind, flags, crc = struct.unpack_from("<IHHI", data, off)
        payload = data[off + 12: off + 12 + length]
        if len(payload) != length or crc != crc32c(payload, crc32c(data[off:off + 8])):
            sys.exit(f"byte {off}: bad record")
        name = kinds.get(kind, f"unknown {kind}")
        msg = message_of[name]()
        msg.ParseFromString(payload)
        if name == "RECORD_HEADER":
            header = msg
        if name == "RECORD_SYMPTOM":
            symptom = msg
        if name == "RECORD_INDEX":
            if off != index_at:
                sys.exit("trailer does not point at the index")
            index = msg
        else:
            seen.append((kind, off))
        counts[name] = counts.get(name, 0) + 1
        off += 12 + length
    if header is None or header.format_major != major:
        sys.exit("header missing or version mismatch")
    if index is None or [(e.kind, e.offset) for e in index.entries] != seen:
        sys.exit("index does not list every record")
    print(f"format {major}.{minor} model {header.model_revision} workload {header.workload.name} "
          f"seeds {header.seeds.workload}/{header.seeds.memory}/{header.seeds.verilator}")
    for k in sorted(counts):
        print(f"{k} {counts[k]}")
    if expect:
        got = pb.Symptom.Kind.Name(symptom.kind) if symptom else "none"
        if got != expect:
            sys.exit(f"symptom {got}, expected {expect}")
        print(f"symptom {got} at cycle {symptom.cycle}: {symptom.message}")


if __name__ == "__main__":
    main()
