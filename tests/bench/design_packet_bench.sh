#!/usr/bin/env bash
# Design packet size per simulated cycle (docs/performance.md, "Design files"): each example is
# scaled to a run of about a million cycles (fir_stream: more samples; vec_dma: a longer vector,
# a bigger memory region and a longer wait_irq timeout), recorded with `bud design run --record`,
# replayed once to show the packet is whole, and its bytes printed with bytes per 1M cycles.
# A design packet holds the run's inputs and end digests, not checkpoints: its size follows the
# stimulus (and the reference output it embeds), not the cycle count.
# Usage: design_packet_bench.sh BUD SOURCE_DIR WORK_DIR [FIR_SAMPLES] [VEC_BYTES]
set -euo pipefail
bud=$1 src=$2 work=$3
samples=${4:-715000}
vec=${5:-1150000}  # a multiple of 8
rm -rf "$work" && mkdir -p "$work" && cd "$work"
export BUD_DESIGN_CACHE="$work/cache"

# Deterministic pseudo-random bytes (the LCG of examples/designs/vec_dma/ref/make_data.py).
lcg() {  # lcg COUNT FILE
  python3 - "$1" "$2" <<'PY'
import sys
n, x, out = int(sys.argv[1]), 12345, bytearray()
for _ in range(n):
    x = (1103515245 * x + 12345) % (1 << 31)
    out.append((x >> 16) & 0xFF)
open(sys.argv[2], "wb").write(bytes(out))
PY
}

report() {  # report NAME JSON PACKET
  python3 - "$@" <<'PY'
import json, os, sys
name, j, packet = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
size = os.path.getsize(packet)
print(f"{name:<11} {j['cycles']:>10} cycles  {j['message'][:4]:<4}  packet {size:>9} bytes "
      f"({j['packet']['file_bytes']} file bytes embedded)  {size * 1e6 / j['cycles']:>12.0f} bytes/1M cycles")
PY
}

# fir_stream: SAMPLES 8-bit samples in, 4-byte sums out (about 1.6 cycles a sample).
cp -r "$src/examples/designs/fir_stream" fs
lcg "$samples" fs/data/samples.bin
"$bud" design run --json fs/fir_stream.toml --max-cycles 100000000 --record fir.bpk > fir.json 2> /dev/null
report fir_stream fir.json fir.bpk

# vec_dma: VEC bytes from ddr+0xA8 to ddr+DST; the region grows to hold both.
cp -r "$src/examples/designs/vec_dma" vd
dst=$(( 0x10D0 + vec - 512 ))
size=$(( dst + vec + 0x100 ))
lcg $(( 0xA8 + vec )) vd/data/ddr.bin
sed -i -e "s/^size = 0x2000/size = $size/" -e "s/^offset = 0x10D0/offset = $dst/" \
  -e "s/^length = 512/length = $vec/" -e "s/\"0xA8\", \"512\"/\"0xA8\", \"$vec\"/" vd/vec_dma.toml
sed -i -e "s/@ddr+0x10D0/@ddr+$dst/" -e "s/^write 0x10 512/write 0x10 $vec/" \
  -e "s/wait_irq timeout 20000/wait_irq timeout 100000000/" vd/firmware.fw
"$bud" design run --json vd/vec_dma.toml --max-cycles 100000000 --record vec.bpk > vec.json 2> /dev/null
report vec_dma vec.json vec.bpk

# Both replay bit-exactly (exit 0).
"$bud" replay fir.bpk vec.bpk > replay.txt
echo "replayed: $(grep -c 'passes bit-exactly' replay.txt) of 2 packets bit-exactly"
