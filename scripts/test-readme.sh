#!/usr/bin/env bash
# The README's newcomer steps, run as written from a fresh clone: clones this repository's
# committed HEAD into a temporary directory, takes the quick start's commands out of README.md
# (the `serve` command named in "With the gateway running (...)", the sample POST and the
# `/events` query), and runs them there. Called by scripts/test; runs on its own too.
#
# Two substitutions keep it inside the CI budget and beside other tests on the machine:
#   - `./scripts/run` (which builds a release binary, several minutes) is replaced by the binary
#     already built from this tree: PULSEGATE_BIN, default `swift build --show-bin-path`/pulsegate.
#     It is the same code as the clone only when the tree is committed (as in CI).
#   - the README's ports 4318 and 4319 are replaced by free loopback ports.
# Everything else (the curl commands, their headers, the sample file path relative to the clone)
# is exactly the README's.
set -euo pipefail
cd "$(dirname "$0")/.."

test_name=test-readme
source scripts/test-support.sh
test_workdir

git clone -q "$(pwd)" "$work/clone" || fail "git clone"
cd "$work/clone"
pass "fresh clone of $(git rev-parse --short HEAD) in $work/clone"

# The first two quick-start commands stay exactly as they are.
first_block=$(awk '/^## Quick start/{q=1} q&&/^```sh/{b=1;next} b&&/^```/{exit} b' README.md)
[ "$(printf '%s\n' "$first_block" | awk '{print $1, $2}' | sed -n 1p)" = "./scripts/run serve" ] \
    || fail "the quick start's first command is not ./scripts/run serve"
[ "$(printf '%s\n' "$first_block" | awk 'NF{print $1}' | sed -n 2p)" = "./scripts/test" ] \
    || fail "the quick start's second command is not ./scripts/test"
pass "the quick start still starts with ./scripts/run serve and ./scripts/test"

read -r p1 p2 < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
ports() { sed -e "s/127\.0\.0\.1:4318/127.0.0.1:$p1/g" -e "s/127\.0\.0\.1:4319/127.0.0.1:$p2/g"; }

serve_args=$(sed -nE 's/^With the gateway running \(`\.\/scripts\/run ([^`]*)`.*/\1/p' README.md | ports)
[ -n "$serve_args" ] || fail "README names no serve command"
# The sh blocks after that sentence: the sample POST, then the /events query.
blocks=$(awk '/^With the gateway running/{q=1} q&&/^```sh/{b=1;n++;next} b&&/^```/{b=0;print "#END";next} b' README.md)
post_cmd=$(printf '%s\n' "$blocks" | awk '/#END/{exit} {print}' | ports)
events_cmd=$(printf '%s\n' "$blocks" | awk 'c==1&&!/#END/{print} /#END/{c++}' | ports)
[[ "$post_cmd" == curl*"/v1/logs"* ]] || fail "README's sample POST not found"
[[ "$events_cmd" == curl*"/events?app=shop"* ]] || fail "README's /events query not found"

# shellcheck disable=SC2086
"$pulsegate" $serve_args --listen "127.0.0.1:$p1" >"$work/serve.log" 2>&1 &
pid=$!
wait_for "the gateway" 30 grep -q '"msg":"gateway listening"' "$work/serve.log"
pass "pulsegate $serve_args (instead of ./scripts/run, see the header) is listening"

first=$(bash -c "$post_cmd") || fail "the sample POST failed"
printf '%s\n' "$first" | grep -q '^HTTP/1.1 200' || fail "the sample POST did not answer 200: $first"
printf '%s' "$first" | tail -n 1 | grep -qx '{}' || fail "the sample POST did not answer {}"
printf '%s\n' "$first" | grep -qi '^X-Request-Id: ' || fail "no X-Request-Id on the answer"
pass "the sample POST answers 200 with {} and an X-Request-Id"
second=$(bash -c "$post_cmd")
printf '%s\n' "$second" | grep -qi '^Apsio-Duplicate: true' || fail "the second POST is not a duplicate"
pass "the same command again answers Apsio-Duplicate: true"

wait_for "the forwarded events on /events" 30 sh -c "$events_cmd | grep -q '\"events\":\\[{'"
pass "the README's /events query shows the forwarded events"
wait_for "the traffic summary line" 15 grep -q '"msg":"traffic","accepted":"1","duplicates":"1"' "$work/serve.log"
pass "the log shows the traffic summary line"
curl -sS -f -o /dev/null "http://127.0.0.1:$p1/status" || fail "/status"
pass "/status answers"
echo "test-readme: $checks checks passed: the README's newcomer steps work from a fresh clone"
