#!/usr/bin/env bash
# A real one-node Slurm cluster runs a sweep (issue 22): slurm-wlm and munge from Debian
# (installed when missing), munged + slurmctld + slurmd on this machine with a config written
# here, inside a private network namespace (loopback only, its own host name), and the array
# script that `acres-harness sweep --emit slurm` makes for 2 modes x 10 shipped scenarios x 3
# repeats with the scripted planner in 3 shards, then its merge job (afterok). The merged
# leaderboard JSON must be byte-identical to the same sweep run in one process. Then a sweep
# whose shard 2 is made to fail: the failed shard ends the array, Slurm kills the merge job whose
# dependency can never be met (DependencyParameters=kill_invalid_depend), and the script sees it
# within its deadline. Every wait has a deadline (ACRES_SLURM_DEADLINE_S, default 600 s): a
# stuck job fails the step with the queue and the logs instead of hanging CI.
#
# Usage: tools/slurm_sweep_test.sh [HARNESS]   (default: target/debug/acres-harness)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
HARNESS=$(realpath "${1:-target/debug/acres-harness}")
[ -x "$HARNESS" ] || { echo "slurm test: no harness at $HARNESS (cargo build -p acres-harness)"; exit 2; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
    echo "== installing slurm-wlm and munge with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge
fi

if [ "${ACRES_SLURM_IN_NETNS:-}" != 1 ]; then
    # Everything below runs in private network, host-name and mount namespaces. Slurm resolves
    # with AI_ADDRCONFIG, for which glibc counts no IPv4 address but 127.0.0.1: a second loopback
    # address (127.0.0.2 on lo, in the namespace) makes it answer. The daemons bind the node's
    # name, 127.0.0.1 in a hosts file mounted over /etc/hosts in the namespace only.
    HOSTS=$(mktemp /tmp/acres-slurm-hosts.XXXXXX)
    printf '127.0.0.1 localhost acresnode\n' > "$HOSTS"
    chmod 644 "$HOSTS"
    rc=0
    # shellcheck disable=SC2016 # $0, $1, $2 are the inner shell's.
    unshare -n -u -m sh -c 'set -e; ip link set lo up; ip link set lo multicast on
        ip addr add 127.0.0.2/32 dev lo
        hostname acresnode; mount --bind "$1" /etc/hosts
        ACRES_SLURM_IN_NETNS=1 exec "$0" "$2"' "$0" "$HOSTS" "$HARNESS" || rc=$?
    rm -f "$HOSTS"
    exit $rc
fi

WORK=$(mktemp -d /tmp/acres-slurm.XXXXXX)
chmod 700 "$WORK"
PIDS=()
cleanup() {
    local rc=$?
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ $rc -ne 0 ]; then
        for f in "$WORK"/*.log "$WORK"/*.out "$M"/*.log "$WORK"/out/slurm/*.log; do
            [ -f "$f" ] && { echo "---- $f"; tail -n 30 "$f"; }
        done
    fi
    rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT

# munge: a fresh key and a socket of this test's own; munged runs as the munge user (as root it
# refuses root's credentials).
M=$WORK/munge
mkdir -p "$M"
chmod 711 "$WORK"
dd if=/dev/urandom of="$M/munge.key" bs=1024 count=1 status=none
chmod 400 "$M/munge.key"
chown -R munge:munge "$M"
chmod 755 "$M"
setpriv --reuid=munge --regid=munge --clear-groups munged --foreground --key-file="$M/munge.key" --socket="$M/munge.sock" \
    --pid-file="$M/munged.pid" --log-file="$M/munged.log" --seed-file="$M/munged.seed" >"$WORK/munged.out" 2>&1 &
PIDS+=($!)

mkdir -p "$WORK/state" "$WORK/spool"
cat > "$WORK/slurm.conf" <<EOF
ClusterName=acres
SlurmctldHost=acresnode(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$M/munge.sock
CredType=cred/munge
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
# Bind the daemons to 127.0.0.1 (NodeAddr, SlurmctldHost), not to every address.
CommunicationParameters=NoInAddrAny
ReturnToService=2
# A job whose dependency can never be met (a failed shard before the merge job's afterok) is
# killed, not left pending forever.
DependencyParameters=kill_invalid_depend
NodeName=acresnode NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=main Nodes=acresnode Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF=$WORK/slurm.conf
for _ in $(seq 50); do [ -S "$M/munge.sock" ] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" >"$WORK/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -N acresnode -f "$SLURM_CONF" >"$WORK/slurmd.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 150); do
    sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && break
    sleep 0.2
done
sinfo -h -o '%N %T' | grep -qE 'idle|mixed' || { echo "slurm test: the node never became idle"; sinfo; exit 1; }
echo "== one-node Slurm up: $(sinfo -h -o '%N %T %c CPUs')"

# The sweep: 2 modes x 10 shipped scenarios x 3 repeats, the scripted planner.
cat > "$WORK/sweep.toml" <<EOF
scenarios = ["$ROOT/scenarios"]
models = ["scripted"]
modes = ["checked", "text"]
repeats = 3
workers = 1
record = "none"
EOF
"$HARNESS" sweep "$WORK/sweep.toml" --out "$WORK/out" --emit slurm --shards 3 --throttle 3 \
    --harness "$HARNESS" > "$WORK/submit.sh"
DEADLINE_S=${ACRES_SLURM_DEADLINE_S:-600}
# wait_jobs JOBS: waits until no job of JOBS (comma-separated) is in the queue; past the
# deadline it prints the queue, cancels the jobs and fails.
wait_jobs() {
    local until=$(( $(date +%s) + DEADLINE_S ))
    while squeue -h -j "$1" 2>/dev/null | grep -q .; do
        if [ "$(date +%s)" -ge "$until" ]; then
            echo "slurm test: jobs $1 still queued after ${DEADLINE_S} s:"
            squeue -j "$1" -o '%i %T %r' || true
            scancel "${1//,/ }" || true
            return 1
        fi
        sleep 1
    done
}
t0=$(date +%s)
read -r array_job merge_job < <(bash "$WORK/submit.sh")
echo "== submitted array job $array_job (3 shards) and merge job $merge_job"
wait_jobs "$array_job,$merge_job"
t1=$(date +%s)
state=$(sacct -n -X -j "$merge_job" -o State 2>/dev/null | head -n1 | tr -d ' ' || true)
echo "== the array and the merge job ended after $((t1 - t0)) s (merge job: ${state:-no accounting})"
for i in 1 2 3; do
    grep -q "^shard $i/3: " "$WORK/out/slurm/shard-$i.log" || { echo "slurm test: shard $i did not report"; exit 1; }
    grep "^shard $i/3: " "$WORK/out/slurm/shard-$i.log"
done
[ -s "$WORK/out/leaderboard.json" ] || { echo "slurm test: the merge job wrote no leaderboard"; exit 1; }

# The same sweep in one process.
"$HARNESS" sweep "$WORK/sweep.toml" --out "$WORK/one" --workers 2 --quiet
"$HARNESS" leaderboard "$WORK/one" --json "$WORK/one.json"
t2=$(date +%s)
echo "== the same sweep in one process: $((t2 - t1)) s"
if ! cmp "$WORK/out/leaderboard.json" "$WORK/one.json"; then
    diff "$WORK/out/leaderboard.json" "$WORK/one.json" | head -n 40
    echo "slurm test: the merged leaderboard differs from the one-process sweep's"
    exit 1
fi

echo "== slurm test: the merged leaderboard of 3 Slurm shards is byte-identical to one process's ($(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["runs"])' "$WORK/one.json") runs)"

# A shard made to fail: the harness of shard 2 exits 1 at once. The merge job's dependency can
# then never be met: Slurm must kill it, and the wait must end well inside the deadline.
# shellcheck disable=SC2016 # ${SLURM_ARRAY_TASK_ID} and $@ are the wrapper's own.
printf '#!/bin/sh\nif [ "${SLURM_ARRAY_TASK_ID:-}" = 2 ]; then echo "shard 2: made to fail by the test" >&2; exit 1; fi\nexec "%s" "$@"\n' \
    "$HARNESS" > "$WORK/failing-harness.sh"
chmod 755 "$WORK/failing-harness.sh"
"$HARNESS" sweep "$WORK/sweep.toml" --out "$WORK/fail" --emit slurm --shards 3 --throttle 3 \
    --harness "$WORK/failing-harness.sh" > "$WORK/submit-fail.sh"
t3=$(date +%s)
read -r array_job merge_job < <(bash "$WORK/submit-fail.sh")
wait_jobs "$array_job,$merge_job"
t4=$(date +%s)
merge_state=$(scontrol -o show job "$merge_job" 2>/dev/null | grep -o 'JobState=[A-Z_]* Reason=[A-Za-z_]*' || true)
echo "== a failed shard: the array and the merge job left the queue after $((t4 - t3)) s (merge job: ${merge_state:-gone})"
[ ! -e "$WORK/fail/leaderboard.json" ] || { echo "slurm test: the merge ran although shard 2 failed"; exit 1; }
case "$merge_state" in
    *JobState=COMPLETED*) echo "slurm test: the merge job completed although shard 2 failed"; exit 1 ;;
esac
