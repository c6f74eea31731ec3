#!/usr/bin/env bash
# A real single-node Slurm on this machine, for the campaign tests: munge, slurmctld and slurmd
# on localhost, with their configuration, state and logs under one folder.
#   scripts/slurm_local.sh start DIR   # prints "export SLURM_CONF=DIR/slurm.conf"
#   scripts/slurm_local.sh stop DIR
# Exit: 0 done; 2 bad input; 3 Slurm cannot be started on this machine (missing daemons, not
# root, ...: it says why).
# SLURM_LOCAL_PORT (default 16817) and the next port are the controller's and the node's.
# Needs Debian's slurm-wlm and munge (scripts/setup.sh installs them) and root (the daemons run
# as root here: a throwaway test cluster). Partition "debug" holds the one node.
set -uo pipefail
# The header comment above is the usage: --help prints it.
usage_text() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
case "${1:-}" in --help|-h) usage_text; exit 0 ;; esac
usage() { echo "slurm_local: error: usage: slurm_local.sh start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] && [ -n "$2" ] || usage
cmd="$1"
dir="$(realpath -m "$2")"
skip() { echo "slurm_local: cannot start Slurm here: $*" >&2; exit 3; }

if [ "$cmd" = stop ]; then
  pids=()
  for pidfile in "$dir"/slurmd.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
    [ -f "$pidfile" ] && pids+=("$(cat "$pidfile")")
  done
  ((${#pids[@]})) || exit 0
  kill "${pids[@]}" 2>/dev/null
  for _ in $(seq 1 20); do kill -0 "${pids[@]}" 2>/dev/null || exit 0; sleep 0.5; done
  kill -9 "${pids[@]}" 2>/dev/null  # still there after 10 s
  exit 0
fi
[ "$cmd" = start ] || usage
for exe in slurmctld slurmd munged sbatch squeue scontrol; do
  command -v "$exe" >/dev/null || skip "$exe is missing (apt-get install slurm-wlm munge)"
done
[ "$(id -u)" -eq 0 ] || skip "it needs root to run slurmd"
mkdir -p "$dir"/{spool,state,munge,log} || skip "cannot write $dir"
host="$(hostname -s)"
port="${SLURM_LOCAL_PORT:-16817}"
cpus="$(nproc)"
mem="$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)"  # half the memory, in MB

# munge: a fresh key, its own socket.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" ||
  skip "munged did not start (see $dir/log/munged.log)"

cat > "$dir/slurm.conf" <<CONF
ClusterName=mgpu-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CryptoType=crypto/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmctldPort=$port
SlurmdPort=$((port + 1))
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -c >/dev/null 2>&1 || skip "slurmctld did not start (see $dir/log/slurmctld.log)"
slurmd >/dev/null 2>&1 || skip "slurmd did not start (see $dir/log/slurmd.log)"
for _ in $(seq 1 30); do
  state="$(sinfo -h -o %t 2>/dev/null | head -n1)"
  case "$state" in idle*|mix*|alloc*) echo "export SLURM_CONF=$dir/slurm.conf"; exit 0 ;; esac
  sleep 1
done
skip "the node did not come up (state '${state:-none}'; see $dir/log)"
