#!/usr/bin/env bash
# Helpers shared by scripts/test-telemetry.sh, scripts/test-readme.sh and scripts/test-nginx.sh
# (sourced, not run): pass/fail reporting, the pulsegate binary, a temporary directory with one
# background process stopped by its PID on exit, and polling.
#
#   test_name=NAME; source scripts/test-support.sh
#   test_workdir                      # sets $work, removed on exit with the process in $pid
#   "$pulsegate" serve ... & pid=$!
#   wait_for "the gateway" 30 grep -q '"msg":"gateway listening"' "$work/serve.log"

checks=0
# Reports the failure with the end of every log in $work (when there is one) and exits.
fail() {
    echo "$test_name: FAILED: $*" >&2
    if [ -n "${work:-}" ] && [ -d "$work" ]; then
        local log
        for log in "$work"/*.log; do
            [ -f "$log" ] || continue
            echo "---- $(basename "$log") (last 20 lines)" >&2
            tail -n 20 "$log" >&2 || true
        done
    fi
    exit 1
}
pass() {
    checks=$((checks + 1))
    echo "  ok  $*"
}

# The binary under test: PULSEGATE_BIN, else the debug build (built when missing).
pulsegate=${PULSEGATE_BIN:-"$(swift build --show-bin-path)/pulsegate"}
[ -x "$pulsegate" ] || swift build --product pulsegate >/dev/null
[ -x "$pulsegate" ] || fail "no pulsegate binary at $pulsegate"
pulsegate=$(cd "$(dirname "$pulsegate")" && pwd)/$(basename "$pulsegate")

pid=""
test_workdir() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/pulsegate-$test_name.XXXXXX")
    trap test_cleanup EXIT
}
test_cleanup() {
    if [ -n "$pid" ]; then
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}

# Polls `command...` every 0.1 s until it succeeds or `seconds` pass.
wait_for() {
    local what=$1 seconds=$2
    shift 2
    local deadline=$(($(date +%s) + seconds))
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || fail "timed out after ${seconds}s waiting for $what"
        sleep 0.1
    done
}
