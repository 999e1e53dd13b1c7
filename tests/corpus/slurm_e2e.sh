#!/usr/bin/env bash
# End to end on a real single-node Slurm cluster (Debian's slurm-wlm and munge), started and
# stopped here: munged with a generated key, slurmctld and slurmd as root with a generated
# slurm.conf (proctrack/linuxproc, task/none, one partition with this host's CPUs). Submits a
# corpus with injected failures through `bud corpus submit --slurm`, waits for the merge job
# (bounded poll), and checks the merged report against a serial replay of the same corpus.
# A daemon that does not start FAILS the test with its log; nothing is skipped.
#   slurm_e2e.sh BUD CORPUS_DIR WORK_DIR        (as root; ctest corpus:slurm-e2e)
# Environment: BUD_SLURM_PORT (16817), BUD_SLURM_TIMEOUT (300 s), BUD_SLURM_SHARDS (array tasks;
# default one per packet).
set -uo pipefail
bud=$1
corpus=$(cd "$2" && pwd)  # absolute, as bud corpus submit writes it
work=$3
timeout_s=${BUD_SLURM_TIMEOUT:-300}

fail() {
  echo "slurm_e2e: FAIL: $*" >&2
  for f in munged.log slurmctld.log slurmd.log; do
    [ -f "$work/$f" ] && { echo "----- $f (last 40 lines)" >&2; tail -n 40 "$work/$f" >&2; }
  done
  for f in "$work"/run/logs/*.out; do
    [ -f "$f" ] && { echo "----- $f" >&2; cat "$f" >&2; }
  done
  exit 1
}

[ "$(id -u)" -eq 0 ] || fail "must run as root (it starts slurmctld, slurmd and munged)"
for prog in munged slurmctld slurmd sbatch squeue sinfo scontrol; do
  command -v "$prog" >/dev/null || fail "$prog not found: install slurm-wlm and munge (tools/setup-deps.sh)"
done

rm -rf "$work"
mkdir -p "$work/state" "$work/spool" "$work/munge"
chmod 755 "$work/munge"
pids=()
cleanup() {
  # Only the daemons this script started, by their pids.
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
}
trap cleanup EXIT

# munge: a generated key, a private socket.
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
sock="$work/munge/munge.socket"
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$sock" \
  --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munge.seed" \
  --log-file="$work/munged.log" >>"$work/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "munged did not create its socket $sock"

host=$(hostname -s)
cpus=$(nproc)
port=${BUD_SLURM_PORT:-16817}
cat >"$work/slurm.conf" <<CONF
ClusterName=budtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MaxArraySize=1001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=bud Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >>"$work/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >>"$work/slurmd.log" 2>&1 &
pids+=($!)
idle=""
for _ in $(seq 1 100); do
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a daemon (pid $pid) exited"; done
  state=$(sinfo -h -N -o '%T' 2>/dev/null | head -n1)
  case "$state" in idle*|mixed*|allocated*) idle=1; break ;; esac
  sleep 0.2
done
[ -n "$idle" ] || fail "the node did not become idle in 20 s (sinfo: ${state:-no answer})"

t0=$(date +%s.%N)
"$bud" corpus submit --slurm "$corpus" --out "$work/run" ${BUD_SLURM_SHARDS:+--shards "$BUD_SLURM_SHARDS"} \
  --json >"$work/submit.json" \
  2>"$work/submit.err" || fail "bud corpus submit failed: $(cat "$work/submit.err")"
cat "$work/submit.json"
merge_job=$(sed -n 's/.*"merge_job":"\([0-9]*\)".*/\1/p' "$work/submit.json")
[ -n "$merge_job" ] || fail "no merge job id in $(cat "$work/submit.json")"

# Bounded poll: the merge job leaves the queue when it has run.
deadline=$(( $(date +%s) + timeout_s ))
while squeue -h -j "$merge_job" 2>/dev/null | grep -q .; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "merge job $merge_job still queued after ${timeout_s}s: $(squeue 2>&1)"
  sleep 0.5
done
t1=$(date +%s.%N)
echo "slurm_e2e: corpus of $(ls "$corpus"/*.bpk | wc -l) packets through Slurm in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"

merged=$work/run/merged
[ -f "$merged/replay.xml" ] || fail "the merge job wrote no $merged/replay.xml"
grep -q '"missing": \[\]' "$merged/summary.json" || fail "shards missing: $(cat "$merged/summary.json")"
grep -q '"exit_code": 1' "$merged/summary.json" || fail "merged exit code is not 1: $(cat "$merged/summary.json")"

"$bud" replay "$corpus" --junit "$work/serial.xml" >/dev/null
strip() { sed -E 's/time="[0-9.]+"/time="T"/g' "$1"; }
if ! diff <(strip "$work/serial.xml") <(strip "$merged/replay.xml") >"$work/diff.txt"; then
  cat "$work/diff.txt" >&2
  fail "the merged report differs from a serial replay of the same corpus"
fi
echo "slurm_e2e: PASS: merged report of $(grep -c '<testcase' "$merged/replay.xml") packets equals the serial replay's"
