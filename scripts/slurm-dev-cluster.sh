#!/usr/bin/env bash
# A single-node SLURM cluster (with accounting) for stemma's development and CI.
#
#   bash scripts/slurm-dev-cluster.sh start    # install if needed, configure, start, wait until usable
#   bash scripts/slurm-dev-cluster.sh status   # daemons and the node's state; exit 0 only if usable
#   bash scripts/slurm-dev-cluster.sh stop     # stop every daemon this script started
#
# Runs as root, with no systemd and no terminal; idempotent (start on a running cluster only
# checks it). Installs Debian's packages (Slurm 22.05) with --no-install-recommends, runs a
# private MariaDB (no network, a socket under the state directory) for slurmdbd, because submitit
# reads job states only through sacct. Everything the daemons write lives under $STATE.
#
# Environment: STEMMA_SLURM_STATE (default /var/lib/stemma-slurm), STEMMA_SLURM_TIMEOUT (seconds
# to wait for the node, default 60).
set -euo pipefail

STATE=${STEMMA_SLURM_STATE:-/var/lib/stemma-slurm}
TIMEOUT=${STEMMA_SLURM_TIMEOUT:-60}
ETC=/etc/slurm
PACKAGES=(munge slurmctld slurmd slurm-client slurmdbd mariadb-server-core mariadb-client-core)
COMMANDS=(munged slurmctld slurmd slurmdbd sinfo sacct squeue mariadbd mariadb-install-db mariadb)
DB_SOCKET=$STATE/mysql/mysqld.sock
DB_PASS=stemma-dev-only
HOST=$(hostname -s)

log() { echo "slurm-dev-cluster: $*" >&2; }
die() {
    log "error: $*"
    exit 1
}

# ----------------------------------------------------------------------------- processes

# The PID in $1 if it names a live process whose /proc/PID/comm is $2 (zombies and reused PIDs
# do not count: PIDs are reaped lazily here, and a zombie still answers kill -0).
live_pid() {
    local file=$1 comm=$2 pid state
    [[ -s $file ]] || return 1
    pid=$(tr -dc '0-9' <"$file")
    [[ -n $pid && -r /proc/$pid/comm ]] || return 1
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm" ]] || return 1
    state=$(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [[ $state != Z ]] || return 1
    echo "$pid"
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
    local seconds=$1 what=$2 deadline
    shift 2
    deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || die "timed out after ${seconds}s waiting for $what (logs: $STATE/log)"
        sleep 0.2
    done
}

# Start a daemon unless its PID file names a live one. Its stdio goes to /dev/null.
start_daemon() { # start_daemon PIDFILE COMM COMMAND...
    local pidfile=$1 comm=$2
    shift 2
    if live_pid "$pidfile" "$comm" >/dev/null; then
        return 0
    fi
    rm -f "$pidfile"
    log "starting $comm"
    setsid "$@" </dev/null >/dev/null 2>&1 &
    wait_for 30 "$comm to write $pidfile" live_pid "$pidfile" "$comm"
}

stop_daemon() { # stop_daemon PIDFILE COMM
    local pidfile=$1 comm=$2 pid
    pid=$(live_pid "$pidfile" "$comm") || {
        rm -f "$pidfile"
        return 0
    }
    log "stopping $comm ($pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
        live_pid "$pidfile" "$comm" >/dev/null || break
        sleep 0.1
    done
    if live_pid "$pidfile" "$comm" >/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

# ----------------------------------------------------------------------------- install

install_packages() {
    local missing=()
    for command in "${COMMANDS[@]}"; do
        command -v "$command" >/dev/null 2>&1 || missing+=("$command")
    done
    ((${#missing[@]} == 0)) && return 0
    log "installing ${PACKAGES[*]} (missing: ${missing[*]})"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" >"$STATE/log/apt.log" 2>&1; then
        apt-get update -q >>"$STATE/log/apt.log" 2>&1 || die "apt-get update failed (see $STATE/log/apt.log)"
        apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" >>"$STATE/log/apt.log" 2>&1 ||
            die "apt-get install failed (see $STATE/log/apt.log)"
    fi
}

ensure_user() { # ensure_user NAME
    getent passwd "$1" >/dev/null || useradd --system --no-create-home --shell /usr/sbin/nologin "$1"
}

# ----------------------------------------------------------------------------- configuration

CONFIG_CHANGED=0

write_if_changed() { # write_if_changed FILE MODE  (content on stdin); sets CONFIG_CHANGED=1
    local file=$1 mode=$2 tmp
    tmp=$(mktemp "$file.XXXXXX")
    cat >"$tmp"
    chmod "$mode" "$tmp"
    if [[ -f $file ]] && cmp -s "$tmp" "$file"; then
        rm -f "$tmp"
    else
        mv -f "$tmp" "$file"
        CONFIG_CHANGED=1
    fi
}

configure() {
    mkdir -p "$ETC" "$STATE"/{log,slurmctld,slurmd,mysql}
    chmod 755 "$STATE" # the mysql user must traverse it to reach its data directory
    ensure_user munge
    ensure_user mysql
    # munge: key, and a run directory that no systemd made for us.
    mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
    if [[ ! -s /etc/munge/munge.key ]]; then
        dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
    fi
    chown munge:munge /etc/munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge
    chmod 0400 /etc/munge/munge.key
    chmod 0755 /run/munge
    chmod 0700 /etc/munge /var/lib/munge /var/log/munge
    chown -R mysql:mysql "$STATE/mysql"

    local node memory
    # e.g. "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=23000"
    node=$(slurmd -C | head -n 1)
    memory=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")
    node=$(sed "s/RealMemory=[0-9]*/RealMemory=$((memory * 9 / 10))/" <<<"$node")

    write_if_changed "$ETC/slurm.conf" 0644 <<EOF
# Written by stemma's scripts/slurm-dev-cluster.sh: a single-node cluster for development and CI.
ClusterName=stemma-dev
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MailProg=/bin/true
ReturnToService=2
SchedulerParameters=batch_sched_delay=0,sched_interval=2,bf_interval=2
KillWait=5
AuthInfo=cred_expire=5
MaxJobCount=100000
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

    write_if_changed "$ETC/slurmdbd.conf" 0600 <<EOF
# Written by stemma's scripts/slurm-dev-cluster.sh. slurmdbd reaches MariaDB through the socket
# in MYSQL_UNIX_PORT (Slurm's MySQL plugin has no socket option).
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
SlurmUser=root
PidFile=$STATE/slurmdbd.pid
LogFile=$STATE/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$DB_PASS
StorageLoc=slurm_acct_db
EOF
}

# ----------------------------------------------------------------------------- start

start_database() {
    if [[ ! -d $STATE/mysql/data/mysql ]]; then
        log "initializing MariaDB in $STATE/mysql/data"
        mariadb-install-db --no-defaults --datadir="$STATE/mysql/data" --user=mysql \
            --auth-root-authentication-method=socket >"$STATE/log/mariadb-install-db.log" 2>&1 ||
            die "mariadb-install-db failed (see $STATE/log/mariadb-install-db.log)"
    fi
    # mariadbd does not daemonize: setsid detaches it from this shell.
    start_daemon "$STATE/mysql/mariadbd.pid" mariadbd \
        mariadbd --no-defaults --datadir="$STATE/mysql/data" --user=mysql --skip-networking \
        --socket="$DB_SOCKET" --pid-file="$STATE/mysql/mariadbd.pid" \
        --log-error="$STATE/log/mariadbd.log"
    wait_for 30 "the MariaDB socket" test -S "$DB_SOCKET"
    wait_for 30 "MariaDB to answer" mariadb --no-defaults --socket="$DB_SOCKET" -u root -e "SELECT 1"
    mariadb --no-defaults --socket="$DB_SOCKET" -u root -e "
        CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
        GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';"
}

node_state() { sinfo -h -N -n "$HOST" -o %T 2>/dev/null | head -n 1; }

node_usable() {
    local state
    state=$(node_state) || return 1
    [[ $state =~ ^(idle|mixed|allocated|completing)$ ]]
}

accounting_answers() { sacct -n -X -S now-1minutes -o JobID >/dev/null 2>&1; }

cluster_ready() { node_usable && accounting_answers; }

daemons_live() {
    live_pid /run/munge/munged.pid munged >/dev/null &&
        live_pid "$STATE/mysql/mariadbd.pid" mariadbd >/dev/null &&
        live_pid "$STATE/slurmdbd.pid" slurmdbd >/dev/null &&
        live_pid "$STATE/slurmctld.pid" slurmctld >/dev/null &&
        live_pid "$STATE/slurmd.pid" slurmd >/dev/null
}

resume_node_if_down() {
    local state
    state=$(node_state) || return 0
    if [[ $state =~ ^(down|drained|draining|drain) ]]; then
        log "node $HOST is $state; resuming it"
        scontrol update NodeName="$HOST" State=RESUME >/dev/null 2>&1 || true
    fi
}

start() {
    [[ $(id -u) == 0 ]] || die "run as root (it installs packages and starts daemons)"
    mkdir -p "$STATE/log"
    install_packages
    configure
    if ((CONFIG_CHANGED == 0)) && daemons_live && cluster_ready; then
        log "already running: node $HOST $(node_state)"
        return 0
    fi
    if ((CONFIG_CHANGED == 1)); then # restart what reads the configuration
        stop_daemon "$STATE/slurmd.pid" slurmd
        stop_daemon "$STATE/slurmctld.pid" slurmctld
        stop_daemon "$STATE/slurmdbd.pid" slurmdbd
    fi
    start_daemon /run/munge/munged.pid munged runuser -u munge -- munged
    start_database
    MYSQL_UNIX_PORT=$DB_SOCKET start_daemon "$STATE/slurmdbd.pid" slurmdbd slurmdbd
    # slurmctld exits at once ("no TRES from the database") if slurmdbd is not listening yet,
    # which a loaded machine shows: wait for its port first.
    wait_for 60 "slurmdbd to listen on port 6819" bash -c '</dev/tcp/127.0.0.1/6819'
    start_daemon "$STATE/slurmctld.pid" slurmctld slurmctld
    start_daemon "$STATE/slurmd.pid" slurmd slurmd -N "$HOST"
    local deadline=$((SECONDS + TIMEOUT))
    until cluster_ready; do
        resume_node_if_down
        ((SECONDS < deadline)) ||
            die "the node is '$(node_state)' or sacct does not answer after ${TIMEOUT}s (logs: $STATE/log)"
        sleep 0.3
    done
    log "ready: node $HOST $(node_state), accounting answers"
}

stop() {
    stop_daemon "$STATE/slurmd.pid" slurmd
    stop_daemon "$STATE/slurmctld.pid" slurmctld
    stop_daemon "$STATE/slurmdbd.pid" slurmdbd
    stop_daemon "$STATE/mysql/mariadbd.pid" mariadbd
    stop_daemon /run/munge/munged.pid munged
    log "stopped"
}

status() {
    local pidfile comm pid code=0
    for entry in /run/munge/munged.pid:munged "$STATE/mysql/mariadbd.pid:mariadbd" \
        "$STATE/slurmdbd.pid:slurmdbd" "$STATE/slurmctld.pid:slurmctld" "$STATE/slurmd.pid:slurmd"; do
        pidfile=${entry%:*}
        comm=${entry##*:}
        if pid=$(live_pid "$pidfile" "$comm"); then
            echo "$comm: running ($pid)"
        else
            echo "$comm: not running"
            code=1
        fi
    done
    if ((code == 0)) && cluster_ready; then
        echo "node $HOST: $(node_state); accounting answers"
    else
        echo "cluster: not usable (start it with: bash scripts/slurm-dev-cluster.sh start)"
        code=1
    fi
    return "$code"
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
*)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
