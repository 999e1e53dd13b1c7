# A single-node Slurm cluster for the end-to-end tests, started by the test and stopped when it
# exits (sourced: `. slurm_cluster.sh`, then `start_slurm_cluster`). Debian's slurm-wlm and
# munge: munged with a generated key, slurmctld and slurmd as root with a generated slurm.conf
# (proctrack/linuxproc, task/none, one partition with this host's CPUs). A daemon that does not
# start FAILS the test with its log; nothing is skipped.
# Uses: $work (the test's directory, recreated), BUD_SLURM_PORT (16817). Defines fail, the EXIT
# trap that stops the daemons, and wait_for_job ID TIMEOUT_S. Exports SLURM_CONF.

fail() {
  echo "$(basename "$0" .sh): FAIL: $*" >&2
  for f in munged.log slurmctld.log slurmd.log; do
    [ -f "$work/$f" ] && { echo "----- $f (last 40 lines)" >&2; tail -n 40 "$work/$f" >&2; }
  done
  for f in "$work"/run/logs/*.out; do
    [ -f "$f" ] && { echo "----- $f" >&2; cat "$f" >&2; }
  done
  exit 1
}

start_slurm_cluster() {
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
}

# Bounded poll: a job leaves the queue when it has run.
wait_for_job() {
  local job=$1 timeout_s=$2
  local deadline=$(( $(date +%s) + timeout_s ))
  while squeue -h -j "$job" 2>/dev/null | grep -q .; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "job $job still queued after ${timeout_s}s: $(squeue 2>&1)"
    sleep 0.5
  done
}
