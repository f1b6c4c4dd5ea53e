#!/usr/bin/env bash
# Deterministic cost of the ingest path: instructions per 20-event zstd batch under
# valgrind --tool=callgrind (the machine's load does not change the count).
#
#   scripts/ingest-instructions.sh [--ulid]          (BATCHES="100 300" EVENTS=20 by default)
#   BIN=/path/to/ingest-bench scripts/ingest-instructions.sh   (measure another build)
#
# Runs `ingest-bench throughput` (1 connection, 8 in flight) with B1 and B2 batches, and the same
# with --prepare-only (which stops after encoding the frames); per batch is
#   ((I(B2) - I(B1)) - (Iprep(B2) - Iprep(B1))) / (B2 - B1)
# so start-up and the client's frame preparation cancel out. What remains is the server's path
# (decompression, decode, SQLite, group commit, response) plus the client threads' socket I/O.
set -euo pipefail
cd "$(dirname "$0")/.."
read -r B1 B2 <<<"${BATCHES:-100 300}"
EVENTS="${EVENTS:-20}"
if [ -z "${BIN:-}" ]; then
    SCRATCH="${SCRATCH:-.build-bench}"
    swift build -c release --scratch-path "$SCRATCH" --product ingest-bench >/dev/null
    BIN="$SCRATCH/release/ingest-bench"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# valgrind 3.19 cannot read Swift's DWARF 5: measure a copy without debug info.
strip --strip-debug -o "$WORK/ingest-bench" "$BIN"
count() {
    valgrind --tool=callgrind --callgrind-out-file="$WORK/out" "$WORK/ingest-bench" throughput \
        --connections 1 --batches "$1" --events "$EVENTS" --window 8 "${@:2}" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
FULL1=$(count "$B1" "$@"); FULL2=$(count "$B2" "$@")
PREP1=$(count "$B1" --prepare-only "$@"); PREP2=$(count "$B2" --prepare-only "$@")
echo "instructions: $B1 batches $FULL1 (prepare $PREP1), $B2 batches $FULL2 (prepare $PREP2)"
echo "per $EVENTS-event batch: $(( ((FULL2 - FULL1) - (PREP2 - PREP1)) / (B2 - B1) )) instructions ${*:-random ids}"
