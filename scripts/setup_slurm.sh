#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, for testing `snakemake --profile profiles/slurm`.
#
# Run as root (Debian/Ubuntu). Idempotent and fast to re-run: packages are installed only when
# missing, slurm.conf is rewritten (and the daemons restarted) only when its content changes, and
# a healthy running cluster is left alone. MinJobAge is large so that finished jobs stay visible
# to `squeue`, which the Snakemake SLURM plugin uses as status command when there is no sacct
# (no accounting database here).
#
#   sudo scripts/setup_slurm.sh          # then: sinfo; srun hostname
#
# Environment: SLURM_CONF (default /etc/slurm/slurm.conf), SRRG_SLURM_PARTITION (default debug).
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
    echo "setup_slurm.sh: run as root (it installs packages and starts system daemons)" >&2
    exit 1
fi

CONF=${SLURM_CONF:-/etc/slurm/slurm.conf}
PARTITION=${SRRG_SLURM_PARTITION:-debug}
NODE=$(hostname -s)
CPUS=$(nproc)
# leave 10% of memory to the system; slurmd refuses to start if RealMemory exceeds what it sees
MEM_MB=$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)

log() { echo "setup_slurm: $*" >&2; }

# 1. packages
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    log "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

# 2. munge (authentication between the SLURM daemons and clients)
if [[ ! -s /etc/munge/munge.key ]]; then
    log "creating /etc/munge/munge.key"
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "starting munged"
    runuser -u munge -- /usr/sbin/munged --force
    for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi

# 3. slurm.conf (written only when it changes)
mkdir -p "$(dirname "$CONF")" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/slurm
WANT=$(cat <<EOF
# written by srrg scripts/setup_slurm.sh: a single-node test cluster
ClusterName=srrg
SlurmctldHost=${NODE}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=86400
MaxJobCount=100000
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=10
Waittime=0
NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=${CPUS} RealMemory=${MEM_MB} State=UNKNOWN
PartitionName=${PARTITION} Nodes=${NODE} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
)
CHANGED=0
if [[ ! -f "$CONF" ]] || [[ "$(cat "$CONF")" != "$WANT" ]]; then
    log "writing $CONF"
    printf '%s\n' "$WANT" >"$CONF"
    CHANGED=1
fi

# 4. daemons: (re)start when the config changed or a daemon is not running
running() { pgrep -x "$1" >/dev/null; }
stop() {  # the daemon's own pid file, so no unrelated process is touched
    local pidfile=/run/slurm/$1.pid
    if [[ -s $pidfile ]] && kill "$(cat "$pidfile")" 2>/dev/null; then
        for _ in $(seq 50); do running "$1" || break; sleep 0.1; done
    fi
}
if [[ $CHANGED -eq 1 ]] || ! running slurmctld; then
    stop slurmctld
    log "starting slurmctld"
    slurmctld -f "$CONF"
fi
if [[ $CHANGED -eq 1 ]] || ! running slurmd; then
    stop slurmd
    log "starting slurmd"
    slurmd -f "$CONF" -N "$NODE"
fi

# 5. wait until the node accepts jobs
for i in $(seq 120); do
    STATE=$(sinfo -h -n "$NODE" -o '%T' 2>/dev/null | head -n1 || true)
    case "$STATE" in
        idle | mixed | allocated | completing) break ;;
        down* | drain* | drained*) scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true ;;
    esac
    sleep 0.5
    if [[ $i -eq 120 ]]; then
        log "node $NODE did not become ready (state: ${STATE:-unknown}); see /var/log/slurm/*.log"
        exit 1
    fi
done
log "ready: partition $PARTITION on $NODE ($CPUS CPUs, ${MEM_MB} MB)"
