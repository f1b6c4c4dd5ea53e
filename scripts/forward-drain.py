#!/usr/bin/env python3
"""Fill a gateway outbox with ROWS batches over IDENTITIES device identities (upstream closed),
then drain it into a real `pulsegate ingest` on loopback with forwardWindow WINDOW and print the
drain rate and the gateway and ingest CPU per forwarded row (docs/gateway.md, issue 12).

Usage: scripts/forward-drain.py PULSEGATE_BINARY ROWS IDENTITIES WINDOW WORK_DIR"""
import http.client, json, os, signal, socket, subprocess, sys, time

BIN = sys.argv[1]; N = int(sys.argv[2]); K = int(sys.argv[3]); WINDOW = int(sys.argv[4]); ROOT = sys.argv[5]

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def attr(k, v): return {"key": k, "value": {"stringValue": v}}

def body(i):
    dev = i % K
    res = [attr("device.id", f"dev-{dev}"), attr("app.installation.id", f"inst-{dev}"), attr("service.version", "2.4.1"),
           {"key": "apsio.app.build_number", "value": {"intValue": "241"}}, attr("telemetry.sdk.name", "pulsekit"),
           attr("telemetry.sdk.version", "2.3.0"), attr("os.name", "iOS"), attr("os.type", "darwin"),
           attr("apsio.app.package_name", "com.example.shop")]
    recs = [{"timeUnixNano": f"{1700000000 + r}000000000", "severityText": "INFO",
             "body": {"stringValue": f"request {i}-{r} finished in {r * 7} ms"},
             "attributes": [attr("log.record.uid", f"u-{i}-{r}"), attr("http.route", "/items/{id}")]} for r in range(20)]
    return json.dumps({"resourceLogs": [{"resource": {"attributes": res},
                       "scopeLogs": [{"scope": {"name": "ShopKit"}, "logRecords": recs}]}]}).encode()

def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

def metric(port, name):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10); c.request("GET", "/metrics")
    for line in c.getresponse().read().decode().splitlines():
        if line.startswith(name + " "): return float(line.split()[1])
    return None

def wait_http(port):
    for _ in range(300):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2); c.request("GET", "/healthz"); c.getresponse().read(); return
        except OSError: time.sleep(0.1)
    raise SystemExit("gateway did not start")

os.makedirs(ROOT, exist_ok=True)
cfg = os.path.join(ROOT, "config.json")
json.dump({"forwarding": {"forwardWindow": WINDOW, "maxConnections": 256}}, open(cfg, "w"))
gw_dir = os.path.join(ROOT, "gw"); ingest_dir = os.path.join(ROOT, "ingest")
http_port = free_port()
env = dict(os.environ, PULSEGATE_LOG_LEVEL="error")
log = open(os.path.join(ROOT, "log.txt"), "a")
fill = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{http_port}", "--upstream", f"127.0.0.1:{free_port()}",
                         "--data-dir", gw_dir, "--config", cfg], stderr=log, env=env)
wait_http(http_port)
c = http.client.HTTPConnection("127.0.0.1", http_port, timeout=30)
for i in range(N):
    c.request("POST", "/v1/logs", body(i), {"Content-Type": "application/json", "Apsio-App-Id": "shop", "Apsio-Batch-Id": f"m-{i}"})
    r = c.getresponse(); r.read(); assert r.status == 200, r.status
fill.send_signal(signal.SIGTERM); fill.wait()
import sqlite3
db = sqlite3.connect(os.path.join(gw_dir, "gateway.sqlite"))
db.execute("UPDATE outbox SET attempts = 0, next_attempt_at = 0, last_error = NULL"); db.commit()
assert db.execute("SELECT count(*) FROM outbox").fetchone()[0] == N
db.close()

ingest_port = free_port()
ingest = subprocess.Popen([BIN, "ingest", "--listen", f"127.0.0.1:{ingest_port}", "--data-dir", ingest_dir], stderr=log)
time.sleep(0.5)
load = open("/proc/loadavg").read().split()[:3]
gw = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{http_port}", "--upstream", f"127.0.0.1:{ingest_port}",
                       "--data-dir", gw_dir, "--config", cfg], stderr=log, env=env)
start = time.monotonic()
gw_cpu0 = cpu(gw.pid); in_cpu0 = cpu(ingest.pid)
wait_http(http_port)
while True:
    left = metric(http_port, "pulsegate_outbox_batches")
    if left == 0: break
    time.sleep(0.05)
elapsed = time.monotonic() - start
rss = [l for l in open(f"/proc/{gw.pid}/status") if l.startswith("VmRSS")][0].split()[1]
conns = metric(http_port, "pulsegate_upstream_connections")
gw_cpu = cpu(gw.pid) - gw_cpu0; in_cpu = cpu(ingest.pid) - in_cpu0
gw.send_signal(signal.SIGTERM); gw.wait(); ingest.send_signal(signal.SIGTERM); ingest.wait()
print(f"rows={N} identities={K} window={WINDOW} load={' '.join(load)} drain_s={elapsed:.2f} "
      f"rows_per_s={N / elapsed:.0f} gateway_cpu_us_per_row={gw_cpu / N * 1e6:.0f} ingest_cpu_us_per_row={in_cpu / N * 1e6:.0f} rss_kib={rss} upstream_connections={conns}")
