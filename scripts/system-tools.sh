#!/usr/bin/env bash
# Install the system tools the test suite drives (tmux, for the dashboard's end-to-end test),
# idempotently: nothing happens when they are already there. Needs root and Debian's apt.
set -euo pipefail

TOOLS=(tmux)
missing=()
for tool in "${TOOLS[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
((${#missing[@]} == 0)) && exit 0

if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "system-tools: ${missing[*]} missing; install them (Debian: apt-get install ${missing[*]})" >&2
    exit 1
fi
echo "system-tools: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
    apt-get update -q >>"$log" 2>&1 || { cat "$log" >&2; exit 1; }
    apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$log" 2>&1 || { cat "$log" >&2; exit 1; }
fi
rm -f "$log"
