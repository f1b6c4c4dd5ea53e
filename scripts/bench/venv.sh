#!/usr/bin/env bash
# Creates (or reuses) the benchmarks' Python virtual environment under the build directory with the
# pinned packages of scripts/bench/requirements.txt, again only when that file changed. Sourced by
# the benchmark scripts; sets BENCH_VENV, BENCH_PYTHON and ROTEL_AGENT.
BENCH_VENV=${PULSEGATE_BENCH_VENV:-$(pwd)/.build/venv-bench}
_bench_requirements=scripts/bench/requirements.txt
_bench_want=$(sha256sum "$_bench_requirements" | cut -d' ' -f1)
if [ ! -x "$BENCH_VENV/bin/python" ] || [ "$(cat "$BENCH_VENV/.requirements.sha256" 2>/dev/null)" != "$_bench_want" ]; then
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    source scripts/bootstrap.sh
    pulsegate_apt_install python3 python3-venv
  fi
  echo "== bench: installing pinned Python packages into $BENCH_VENV" >&2
  rm -rf "$BENCH_VENV"
  python3 -m venv "$BENCH_VENV"
  "$BENCH_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --requirement "$_bench_requirements" >&2
  echo "$_bench_want" >"$BENCH_VENV/.requirements.sha256"
fi
BENCH_PYTHON=$BENCH_VENV/bin/python
ROTEL_AGENT=$("$BENCH_PYTHON" -c 'import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), "rotel-agent"))')
[ -x "$ROTEL_AGENT" ] || { echo "bench: no rotel-agent binary at $ROTEL_AGENT" >&2; exit 1; }
