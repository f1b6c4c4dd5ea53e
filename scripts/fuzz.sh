#!/usr/bin/env bash
# Builds a libFuzzer target with AddressSanitizer and runs it for a fixed time.
#
# Usage: scripts/fuzz.sh <target> <seconds>     e.g. scripts/fuzz.sh fuzz-frame 600
#
# - Build: PULSEGATE_FUZZ=1 adds the Fuzz/* targets to Package.swift; the release build uses
#   --sanitize=fuzzer (libFuzzer supplies main) and --sanitize=address, in .build-fuzz.
# - Corpus: fuzz-artifacts/<target>/corpus, seeded from the golden fixtures (hex converted to
#   binary; protobuf targets take only the .pb files) and kept between runs so campaigns build on
#   each other.
# - Findings: crash-*, leak-*, timeout-*, oom-* files in fuzz-artifacts/<target>/. Turn each into a
#   golden fixture and a fix. The script exits 1 when the run produced findings.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 2 ]; then
    echo "usage: $0 <target> <seconds>" >&2
    exit 2
fi
target="$1"
seconds="$2"

seed_formats="hex json plaintext"
case "$target" in
fuzz-frame) seed_dirs=(Tests/MsgTransTests/Fixtures) ;;
fuzz-json) seed_dirs=(Tests/PulseJSONTests/Fixtures Tests/PulseProtocolTests/Fixtures Tests/OTLPProtobufTests/Fixtures docs/examples) ;;
fuzz-protobuf)
    seed_dirs=(Tests/OTLPProtobufTests/Fixtures)
    seed_formats="pb"
    ;;
*)
    echo "unknown fuzz target: $target (expected fuzz-frame, fuzz-json or fuzz-protobuf)" >&2
    exit 2
    ;;
esac

scratch=.build-fuzz
out="fuzz-artifacts/$target"
corpus="$out/corpus"
mkdir -p "$corpus"

# Swift 6.3's release builds compile each module with multi-threaded WMO (-num-threads N), and in
# that mode -sanitize=fuzzer silently drops the coverage instrumentation (libFuzzer then reports
# "no interesting inputs"). Asking for the coverage explicitly restores it.
build=(
    swift build -c release --sanitize=fuzzer --sanitize=address
    -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp
    --scratch-path "$scratch" --product "$target"
)
instrumented() { nm "$1" 2>/dev/null | grep -Ec '^[0-9a-f]+ [dDbB] __start___sancov_cntrs$' >/dev/null; }

echo "== build $target (release, fuzzer + address sanitizers)"
PULSEGATE_FUZZ=1 "${build[@]}"
binary="$(PULSEGATE_FUZZ=1 "${build[@]}" --show-bin-path)/$target"
if ! instrumented "$binary"; then
    # Objects left by a build without the coverage flags are not always recompiled: start over.
    echo "$binary has no coverage counters; rebuilding $scratch from scratch"
    rm -rf "$scratch"
    PULSEGATE_FUZZ=1 "${build[@]}"
    if ! instrumented "$binary"; then
        echo "error: $binary is still not instrumented for coverage" >&2
        exit 2
    fi
fi

echo "== seed corpus from fixtures"
seeded=0
for dir in "${seed_dirs[@]}"; do
    [ -d "$dir" ] || continue
    tag="$(basename "$(dirname "$dir")")"
    for file in "$dir"/*; do
        [ -f "$file" ] || continue
        name="$(basename "$file")"
        case " $seed_formats " in
        *" ${name##*.} "*) ;;
        *) continue ;;
        esac
        case "$name" in
        *.pb) cp "$file" "$corpus/seed-$tag-$name" ;;
        *.hex) sed 's/#.*//' "$file" | xxd -r -p >"$corpus/seed-$tag-${name%.hex}" ;;
        manifest.json) continue ;;
        *.json | *.plaintext) cp "$file" "$corpus/seed-$tag-$name" ;;
        *) continue ;;
        esac
        seeded=$((seeded + 1))
    done
done
echo "seeded $seeded files; corpus holds $(find "$corpus" -type f | wc -l) inputs"

echo "== run $target for ${seconds}s"
log="$out/last-run.log"
before="$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)"
set +e
"$binary" "$corpus" \
    -max_total_time="$seconds" \
    -artifact_prefix="$out/" \
    -max_len=65536 \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -print_final_stats=1 \
    >"$log" 2>&1
status=$?
set -e
tail -n 25 "$log"

executions="$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)"
after="$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)"
echo "== summary: target=$target seconds=$seconds executions=${executions:-unknown} exit=$status" \
    "new_findings=$((after - before)) total_findings=$after log=$log"
if [ "$after" -gt "$before" ] || [ "$status" -ne 0 ]; then
    find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \)
    exit 1
fi
