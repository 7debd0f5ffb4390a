#!/usr/bin/env bash
# A one-node SLURM on this machine, for trying the SLURM array recipe of docs/batches.md (tests/test_slurm.py
# runs it): `start` writes a config, starts munged (as the munge user), slurmctld and slurmd, and waits until
# `sinfo` shows the node idle; `stop` ends the three daemons by their pid files; `status` says what runs.
# Idempotent: `start` on a running SLURM only waits for the node, `stop` on a stopped one does nothing.
#
#   scripts/slurm_local.sh start|stop|status [DIR]     (DIR: default $STIM3D_SLURM_DIR or /tmp/stim3d-slurm)
#
# Everything lives under DIR: etc/slurm.conf, munge/ (its own key, socket, pid and log: a system munged, if
# any, is left alone), spool/, log/, run/*.pid. Clients find it with `export SLURM_CONF=DIR/etc/slurm.conf`
# (`start` prints the line). Addresses are loopback only: the node's NodeAddr and the controller are
# 127.0.0.1. Ports: STIM3D_SLURM_PORT (default 6817) for slurmctld and the next one for slurmd.
# Needs root (SlurmUser=root) and Debian's packages `slurm-wlm munge`; installs nothing: a missing
# command is one line and exit 2.
set -euo pipefail

usage() { echo "usage: slurm_local.sh start|stop|status [DIR]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
action="$1"
DIR="${2:-${STIM3D_SLURM_DIR:-/tmp/stim3d-slurm}}"
case "$DIR" in /*) ;; *) DIR="$PWD/$DIR" ;; esac
PORT="${STIM3D_SLURM_PORT:-6817}"
WAIT_S="${STIM3D_SLURM_WAIT:-60}"  # seconds `start` waits for the node to show idle
NODE="$(hostname -s)"
CPUS="$(nproc)"
CONF="$DIR/etc/slurm.conf"
export SLURM_CONF="$CONF"

die() { echo "slurm_local.sh: $*" >&2; exit 2; }

check_setup() {
  local missing="" c
  for c in munged slurmctld slurmd sinfo scontrol runuser; do
    command -v "$c" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
  done
  [ -z "$missing" ] || die "missing:$missing (install Debian's packages: apt-get install -y slurm-wlm munge)"
  id munge >/dev/null 2>&1 || die "missing: the user 'munge' (Debian's package munge creates it)"
  [ "$(id -u)" -eq 0 ] || die "needs root (it runs slurmd and slurmctld as root, munged as the munge user)"
  [[ "$PORT" =~ ^[0-9]+$ ]] && [ "$PORT" -ge 1024 ] && [ "$PORT" -le 65534 ] \
    || die "STIM3D_SLURM_PORT must be a port number 1024..65534, not '$PORT'"
}

# pid_of NAME: the pid in DIR/run/NAME.pid (munged: DIR/munge/munged.pid) when that process is alive.
pid_of() {
  local file="$DIR/run/$1.pid" pid
  [ "$1" = munged ] && file="$DIR/munge/munged.pid"
  [ -r "$file" ] || return 1
  pid="$(tr -dc 0-9 <"$file")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q "$1" "/proc/$pid/comm" 2>/dev/null && echo "$pid"
}

write_config() {
  mkdir -p "$DIR/etc" "$DIR/spool/ctld" "$DIR/spool/d" "$DIR/log" "$DIR/run" "$DIR/munge"
  chmod 755 "$DIR"
  chown munge:munge "$DIR/munge" && chmod 755 "$DIR/munge"  # clients reach the socket; the key is 400
  if [ ! -s "$DIR/munge/munge.key" ]; then  # 1024 random bytes, readable by the munge user only
    (umask 077 && head -c 1024 /dev/urandom >"$DIR/munge/munge.key")
  fi
  chown munge:munge "$DIR/munge/munge.key" && chmod 400 "$DIR/munge/munge.key"
  cat >"$CONF.tmp" <<EOF
# Written by scripts/slurm_local.sh: a one-node SLURM on this machine, loopback only.
ClusterName=stim3d
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
StateSaveLocation=$DIR/spool/ctld
SlurmdSpoolDir=$DIR/spool/d
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE CPUs=$CPUS State=UNKNOWN
PartitionName=local Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$CONF.tmp" "$CONF"
}

# last_error NAME: the last error line of a daemon's log, to say why it is not running.
last_error() {
  local log="$DIR/log/$1.log"
  [ "$1" = munged ] && log="$DIR/munge/munged.log"
  { grep -iE 'error|fatal' "$log" 2>/dev/null || true; } | tail -n 1 | grep . || echo "see $log"
}

# fail MESSAGE: a start that cannot finish stops what it started, so nothing is left half-running.
fail() { stop >/dev/null 2>&1 || true; die "$*"; }

node_state() { { sinfo --noheader --nodes="$NODE" --format=%T 2>/dev/null || true; } | head -n 1; }

start() {
  check_setup
  write_config
  if ! pid_of munged >/dev/null; then
    runuser -u munge -- munged --socket="$DIR/munge/munge.socket" --key-file="$DIR/munge/munge.key" \
      --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed" \
      || fail "munged did not start (see $DIR/munge/munged.log)"
  fi
  pid_of slurmctld >/dev/null || slurmctld -f "$CONF" || fail "slurmctld did not start (see $DIR/log/slurmctld.log)"
  pid_of slurmd >/dev/null || slurmd -f "$CONF" -N "$NODE" || fail "slurmd did not start (see $DIR/log/slurmd.log)"
  local began=$SECONDS deadline=$((SECONDS + WAIT_S)) state="" name
  while [ $SECONDS -lt $deadline ]; do
    for name in munged slurmctld slurmd; do  # a daemon that died (a port in use, a bad key) ends the wait
      if [ $((SECONDS - began)) -ge 3 ] && ! pid_of "$name" >/dev/null; then
        fail "$name is not running: $(last_error "$name")"
      fi
    done
    state="$(node_state)"
    [ -n "$(pid_of slurmd)" ] || state=""  # a node state kept from an earlier run is no answer
    case "$state" in idle*) break ;; down*|drain*) scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true ;; esac
    sleep 1
  done
  case "$state" in
    idle*) echo "slurm_local.sh: node $NODE idle ($CPUS CPUs, partition local); export SLURM_CONF=$CONF" ;;
    *) fail "node $NODE not idle after ${WAIT_S}s (state '${state:-no answer}'; logs in $DIR/log and $DIR/munge)" ;;
  esac
}

stop() {
  local name pid stopped=""
  for name in slurmd slurmctld munged; do
    pid="$(pid_of "$name")" || continue
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done  # up to 10 s, then SIGKILL
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    stopped="$stopped $name"
  done
  echo "slurm_local.sh: stopped:${stopped:- nothing was running} ($DIR)"
}

status() {
  local name pid running=0
  for name in munged slurmctld slurmd; do
    if pid="$(pid_of "$name")"; then echo "$name: running (pid $pid)"; running=$((running + 1))
    else echo "$name: stopped"; fi
  done
  if [ "$running" -eq 3 ]; then echo "node $NODE: $(node_state || true)"; echo "export SLURM_CONF=$CONF"; fi
  [ "$running" -eq 3 ]
}

case "$action" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
