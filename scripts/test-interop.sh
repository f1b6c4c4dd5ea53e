#!/usr/bin/env bash
# Interop and contract tests (Tests/Interop, docs/interop.md): the OpenTelemetry Python SDK's
# OTLP/HTTP exporters, the companion uploader and schemathesis (openapi/pulsegate.yaml) against
# the real `pulsegate` binary on loopback. Run by scripts/test after the Swift tests; runs alone too.
#
# Python packages are pinned in Tests/Interop/requirements.txt and installed into a virtual
# environment under the build directory (default .build/venv-interop; PULSEGATE_INTEROP_VENV
# overrides), again only when that file changed. The binary is $PULSEGATE_BIN, else the debug
# build's (built when missing; PULSEGATE_SCRATCH_PATH selects a --scratch-path).
#
# Extra arguments go to pytest, e.g. `scripts/test-interop.sh -k uploader`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

fail() {
    echo "test-interop: FAILED: $*" >&2
    exit 1
}

# --- Python and its virtual environment ------------------------------------------------------
PYTHON=${PULSEGATE_PYTHON:-python3}
if ! command -v "$PYTHON" >/dev/null 2>&1 || ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    source scripts/bootstrap.sh
    pulsegate_apt_install python3 python3-venv
    PYTHON=python3
fi
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    fail "Python 3.10 or newer is required ($("$PYTHON" --version 2>&1))"

VENV=${PULSEGATE_INTEROP_VENV:-$ROOT/.build/venv-interop}
REQUIREMENTS=Tests/Interop/requirements.txt
STAMP="$VENV/.requirements.sha256"
WANT=$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    echo "== interop: installing pinned Python packages into $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || fail "could not create the virtual environment $VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        --requirement "$REQUIREMENTS" || fail "pip could not install $REQUIREMENTS"
    echo "$WANT" >"$STAMP"
fi

# --- The pulsegate binary ---------------------------------------------------------------------
if [ -z "${PULSEGATE_BIN:-}" ]; then
    command -v swift >/dev/null 2>&1 || source scripts/bootstrap.sh
    SCRATCH=()
    [ -n "${PULSEGATE_SCRATCH_PATH:-}" ] && SCRATCH=(--scratch-path "$PULSEGATE_SCRATCH_PATH")
    BIN_DIR=$(swift build "${SCRATCH[@]}" --show-bin-path)
    if [ ! -x "$BIN_DIR/pulsegate" ]; then
        echo "== interop: building pulsegate"
        swift build "${SCRATCH[@]}" --product pulsegate || fail "swift build --product pulsegate"
    fi
    export PULSEGATE_BIN="$BIN_DIR/pulsegate"
fi
[ -x "$PULSEGATE_BIN" ] || fail "no pulsegate binary at $PULSEGATE_BIN"

# --- The tests --------------------------------------------------------------------------------
echo "== interop: pytest Tests/Interop (binary $PULSEGATE_BIN)"
START=$(date +%s)
export PYTHONDONTWRITEBYTECODE=1
set +e
(cd Tests/Interop && "$VENV/bin/python" -m pytest -p no:cacheprovider "$@")
STATUS=$?
set -e
echo "== interop: finished in $(($(date +%s) - START)) s"
[ "$STATUS" -eq 0 ] || fail "pytest exited with $STATUS (the failing tests and schemathesis's report are above)"
