#!/usr/bin/env bash
# What operators see, checked against the real binary: `promtool check metrics` on the gateway's
# /metrics and on the embedded ingest's admin /metrics, `promtool test rules` on
# deploy/prometheus/pulsegate-rules.yml, every metric name the rules and the Grafana dashboard use
# exists in the exposition, and the status page rendered in headless Chromium shows the figures
# /metrics exports. Called by scripts/test; runs on its own too:
#
#   scripts/test-telemetry.sh                               # the debug build
#   PULSEGATE_BIN=.build/release/pulsegate scripts/test-telemetry.sh
#   STATUS_SCREENSHOT=docs/status-page.png scripts/test-telemetry.sh   # refresh the docs screenshot
#
# promtool (Debian's prometheus package) and chromium are installed with apt when missing. The
# gateway runs on free loopback ports in a temporary directory and is stopped by its PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
pulsegate_apt_install prometheus chromium

test_name=test-telemetry
source scripts/test-support.sh
test_workdir

echo "== rules"
promtool check rules deploy/prometheus/pulsegate-rules.yml >/dev/null || fail "promtool check rules"
pass "promtool check rules deploy/prometheus/pulsegate-rules.yml"
(cd deploy/prometheus && promtool test rules pulsegate-rules.test.yml >/dev/null) || fail "promtool test rules"
pass "promtool test rules deploy/prometheus/pulsegate-rules.test.yml"

echo "== gateway with the embedded upstream and its admin API"
"$pulsegate" serve --listen 127.0.0.1:0 --admin 127.0.0.1:0 --data-dir "$work/data" >"$work/serve.log" 2>&1 &
pid=$!
wait_for "the gateway" 30 grep -q '"msg":"gateway listening"' "$work/serve.log"
port=$(sed -nE 's|.*"msg":"gateway listening","listen":"127\.0\.0\.1:([0-9]+)".*|\1|p' "$work/serve.log")
admin=$(sed -nE 's|.*"admin":"http://127\.0\.0\.1:([0-9]+)".*|\1|p' "$work/serve.log")
[ -n "$port" ] && [ -n "$admin" ] || fail "could not read the ports from the log"
base="http://127.0.0.1:$port"

post() {  # post BATCH_ID CONTENT_TYPE -> status code
    curl -sS -o /dev/null -w '%{http_code}' "$base/v1/logs" -H "Content-Type: $2" -H 'Apsio-App-Id: shop' \
        -H "Apsio-Batch-Id: $1" -H "X-Request-Id: telemetry-$1" --data-binary @docs/examples/otlp-logs.json
}
[ "$(post t-1 application/json)" = 200 ] || fail "sample batch not accepted"
[ "$(post t-1 application/json)" = 200 ] || fail "duplicate not answered 200"
[ "$(post t-2 text/plain)" = 415 ] || fail "text/plain not answered 415"
wait_for "the batch to be forwarded" 20 sh -c \
    "curl -sS '$base/metrics' | grep -qx 'pulsegate_app_forwarded_total{app=\"shop\"} 1'"
grep -q '"msg":"request refused","requestId":"telemetry-t-2"' "$work/serve.log" || fail "no rejection line"
pass "the 415 is explained in the log with its request id"
curl -sS "http://127.0.0.1:$admin/events?app=shop&limit=1" | grep -q '"events":\[{' \
    || fail "the embedded upstream's /events shows nothing"
pass "serve --admin: /events?app=shop lists the forwarded events"

curl -sS "$base/metrics" >"$work/gateway.prom"
curl -sS "http://127.0.0.1:$admin/metrics" >"$work/ingest.prom"
promtool check metrics <"$work/gateway.prom" || fail "promtool check metrics (gateway)"
pass "promtool check metrics: gateway /metrics ($(grep -c '^# TYPE' "$work/gateway.prom") families)"
promtool check metrics <"$work/ingest.prom" || fail "promtool check metrics (ingest admin)"
pass "promtool check metrics: ingest admin /metrics ($(grep -c '^# TYPE' "$work/ingest.prom") families)"

echo "== status page in headless Chromium"
chromium_flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars
    --user-data-dir="$work/chromium")
chromium "${chromium_flags[@]}" --dump-dom "$base/status" >"$work/status.html" 2>"$work/chromium.log" \
    || fail "chromium --dump-dom"
curl -sS "$base/metrics" >"$work/after.prom"
screenshot=${STATUS_SCREENSHOT:-"$work/status.png"}
chromium "${chromium_flags[@]}" --window-size=1280,900 --screenshot="$screenshot" "$base/status" \
    >>"$work/chromium.log" 2>&1 || fail "chromium --screenshot"
[ -s "$screenshot" ] || fail "no screenshot written"
pass "chromium rendered /status and took a screenshot ($(stat -c %s "$screenshot") bytes)"

python3 - "$work/status.html" "$work/after.prom" deploy/prometheus/pulsegate-rules.yml \
    deploy/grafana/pulsegate-gateway.json <<'PY' || fail "status page, rules or dashboard check"
import html.parser, json, re, sys

dom, prom, rules, dashboard = sys.argv[1:5]
samples, declared = {}, set()
for line in open(prom):
    if line.startswith("# TYPE "):
        # A family with no series yet (a labelled counter nothing has moved) is still exported.
        declared.add(line.split()[2])
    if line.startswith("#") or not line.strip():
        continue
    series, value = line.rsplit(" ", 1)
    samples[series] = float(value)
names = {re.sub(r"\{.*", "", s) for s in samples} | declared
families = {n for n in names} | {re.sub(r"_(bucket|sum|count)$", "", n) for n in names}

class Figures(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.figures, self.tags = [], [], set()
    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        attrs = dict(attrs)
        self.stack.append(attrs.get("data-metric"))
        if attrs.get("data-metric"):
            self.figures.append([attrs["data-metric"], attrs.get("data-value"), ""])
    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()
    def handle_data(self, data):
        if self.stack and self.stack[-1] and self.figures:
            self.figures[-1][2] += data

page = Figures()
page.feed(open(dom).read())
assert "script" not in page.tags, "the status page has a script element"
assert "table" in page.tags, "the status page rendered no table"
assert page.figures, "no figures with data-metric on the page"
checked = 0
for metric, data_value, text in page.figures:
    if metric.startswith("sum(") and metric.endswith(")"):
        inner = metric[4:-1]
        name, labels = inner.split("{", 1)
        wanted = [l for l in labels.rstrip("}").split(",") if l]
        value = sum(v for s, v in samples.items()
                    if s.startswith(name + "{") and all(w in s for w in wanted))
    elif metric.endswith("_seconds"):
        continue  # an age: it moves between the two reads
    else:
        assert metric in samples, f"{metric} is on the page but not in /metrics"
        value = samples[metric]
    shown = float(text.strip())
    assert shown == value, f"page shows {metric} = {shown}, /metrics says {value}"
    checked += 1
assert checked >= 10, f"only {checked} figures compared"
print(f"  ok  {checked} figures on the rendered status page equal /metrics")

used = set()
for text in (open(rules).read(), open(dashboard).read()):
    used |= set(re.findall(r"\b(pulsegate_[a-z_]+|process_[a-z_]+)", text))
json.load(open(dashboard))
derived = {n for n in used if re.sub(r"_(bucket|sum|count)$", "", n) in families}
missing = sorted(used - names - derived)
assert not missing, f"rules or dashboard use metrics the gateway does not export: {missing}"
print(f"  ok  the {len(used)} metric names in the rules and the dashboard all exist in /metrics")
PY
checks=$((checks + 2))
echo "test-telemetry: $checks checks passed"
