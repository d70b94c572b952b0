#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for tests: `scripts/slurm-local.sh start DIR` installs
# Debian's slurmctld, slurmd, slurm-client and munge when they are missing (as root), writes a
# configuration under DIR (its own munge key and socket, state and logs), starts munged, slurmctld
# and slurmd, and waits until the node is idle; it prints the SLURM_CONF line to export.
# `scripts/slurm-local.sh stop DIR` stops the daemons by their PIDs. Nothing outside DIR is written
# (but the packages). Exit 3 when Slurm cannot be had here.
set -euo pipefail
cmd=${1:?usage: scripts/slurm-local.sh start|stop DIR}
dir=$(mkdir -p "${2:?usage: scripts/slurm-local.sh start|stop DIR}" && cd "$2" && pwd)
say() { echo "slurm-local: $*" >&2; }

stop() {
  for daemon in slurmd slurmctld munged; do
    [ -f "$dir/$daemon.pid" ] || continue
    pid=$(cat "$dir/$daemon.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/$daemon.pid"
  done
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { say "unknown command $cmd (start or stop)"; exit 2; }

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null ||
   ! command -v munged >/dev/null; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    say "Slurm is not installed and cannot be installed here (needs root and apt-get)"; exit 3
  fi
  say "installing slurmctld slurmd slurm-client munge"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge; } \
    >"$dir/apt.log" 2>&1 || { tail -3 "$dir/apt.log" >&2; say "apt-get failed"; exit 3; }
fi
stop  # a cluster left by an earlier start in DIR
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
[ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" 2>/dev/null ||
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed" --force

node=$(slurmd -C | head -1)
host=$(echo "$node" | sed -n 's/^NodeName=\([^ ]*\).*/\1/p')
# Two ports, slurmctld's and slurmd's: a pair from this script's PID (even, so that clusters started at
# once by neighbouring PIDs never share one), moved on while something on this machine listens on either.
listening() { awk -v p="$(printf '%04X' "$1")" 'NR > 1 && $4 == "0A" && toupper(substr($2, length($2) - 3)) == p {f = 1} END {exit !f}' /proc/net/tcp /proc/net/tcp6 2>/dev/null; }
port=$((20000 + ($$ % 10000) * 2))
for _ in $(seq 50); do
  listening "$port" || listening $((port + 1)) || break
  port=$((20000 + (port - 20000 + 2) % 20000))
done
cat >"$dir/slurm.conf" <<CONF
ClusterName=kforge-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
MpiDefault=none
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 300); do  # 30 s: a loaded machine is slow to register the node
  state=$(sinfo -h -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.1
done
if [ "$state" != idle ]; then
  say "the node did not come up (state '${state:-none}'); logs in $dir"
  tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
  stop
  exit 1
fi
echo "SLURM_CONF=$dir/slurm.conf"
