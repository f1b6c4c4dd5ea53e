"""openapi/pulsegate.yaml against the real gateway, with schemathesis.

The gateway is `pulsegate serve` with its embedded reference ingest server (no --upstream), on a
free loopback port, with a temporary data directory (on /dev/shm when it exists: this test is about
the HTTP contract, not fsync latency) and `defaultAppId`, so requests without `Apsio-App-Id`
reach the mapper too. Settings and the two project-specific checks: schemathesis.toml and
schemathesis_hooks.py next to this file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import yaml

from conftest import REPO, start_gateway

SPEC = REPO / "openapi" / "pulsegate.yaml"
HERE = Path(__file__).resolve().parent


def test_spec_lists_every_gateway_route():
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    assert spec["openapi"].startswith("3.1")
    assert set(spec["paths"]) == {
        "/v1/logs",
        "/v1/traces",
        "/v1/metrics",
        "/v1/policy",
        "/v1/diagnostics",
        "/livez",
        "/readyz",
        "/metrics",
        "/status",
        "/status.json",
    }
    for path in ("/v1/logs", "/v1/traces", "/v1/metrics"):
        operation = spec["paths"][path]["post"]
        assert set(operation["requestBody"]["content"]) == {"application/json", "application/x-protobuf"}
        assert {"200", "400", "401", "403", "405", "413", "415", "429", "503"} <= set(operation["responses"])


# Apsio-Sent-At values at the edges of what the spec's pattern says; the real gateway must agree on
# every one (schemathesis generates from the pattern, so a looser pattern fails its positive check).
SENT_AT_CASES = [
    "2026-05-01T10:00:00Z",
    "2026-05-01t10:00:00z",
    "2026-05-01 10:00:00.123456789+05:30",
    "2026-05-01T23:59:60-23:59",
    "2026-05-01T10:00:00+09:73",
    "2026-05-01T10:00:00+24:00",
    "2026-05-01T10:00:00+0900",
    "2026-05-01T10:00:00",
    "2026-05-01T24:00:00Z",
    "2026-05-01T10:60:00Z",
    "2026-05-01T10:00:61Z",
    "2026-05-01T10:00:00.Z",
    "2024-02-29T00:00:00Z",
    "2000-02-29T00:00:00Z",
    "0000-02-29T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "1900-02-29T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "2026-11-31T00:00:00Z",
    "2026-12-31T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-00-10T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "1777636800123",
    "999999999999999",
    "1777636800123456",
    "-1777636800123",
]


def test_sent_at_pattern_is_exactly_what_the_gateway_accepts(tmp_path):
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    pattern = re.compile(spec["components"]["parameters"]["ApsioSentAt"]["schema"]["pattern"])
    service, url = start_gateway(str(tmp_path), config={"defaultAppId": "sent-at"})
    try:
        disagreements = []
        for number, value in enumerate(SENT_AT_CASES):
            body = {
                "resourceLogs": [
                    {
                        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "s"}}]},
                        "scopeLogs": [{"logRecords": [{"body": {"stringValue": "hello"}}]}],
                    }
                ]
            }
            request = urllib.request.Request(
                f"{url}/v1/logs",
                data=json.dumps(body).encode(),
                headers={
                    "Content-Type": "application/json",
                    "Apsio-Batch-Id": f"sent-at-{number}",
                    "Apsio-Sent-At": value,
                    "Apsio-Platform": "linux",
                    "Apsio-Device-Id": "sent-at-device",
                },
            )
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    status = response.status
            except urllib.error.HTTPError as refused:
                status = refused.code
                message = json.load(refused).get("message", "")
                if status == 400:
                    assert "Apsio-Sent-At" in message, f"{value!r}: 400 for another reason: {message}"
            accepted = status == 200
            assert status in (200, 400), f"{value!r}: unexpected status {status}"
            if accepted != bool(pattern.fullmatch(value)):
                disagreements.append((value, status))
        assert disagreements == [], f"the spec's pattern and the gateway disagree on: {disagreements}"
    finally:
        service.stop()


def test_schemathesis_finds_no_failures():
    data_root = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    data_dir = tempfile.mkdtemp(prefix="pulsegate-schemathesis-", dir=data_root)
    service, url = start_gateway(data_dir, config={"defaultAppId": "schemathesis"})
    try:
        command = [
            os.path.join(os.path.dirname(sys.executable), "schemathesis"),
            "--no-color",
            "--config-file",
            str(HERE / "schemathesis.toml"),
            "run",
            str(SPEC),
            "--url",
            url,
        ]
        if seed := os.environ.get("PULSEGATE_SCHEMATHESIS_SEED"):
            command += ["--seed", seed]
        result = subprocess.run(command, cwd=HERE, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        report = result.stdout + result.stderr
        print(report)
        assert result.returncode == 0, f"schemathesis found problems (exit {result.returncode}):\n{report}"
        # The gateway held up: still live and still answering.
        with urllib.request.urlopen(f"{url}/livez", timeout=10) as response:
            assert response.status == 200
        assert service.process.poll() is None, "the gateway exited during the run"
    finally:
        service.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    assert service.process.returncode == 0, "the gateway did not shut down cleanly:\n" + "".join(service.lines[-50:])
    errors = [line for line in service.lines if '"level":"error"' in line]
    assert not errors, "the gateway logged errors during the run:\n" + "".join(errors[:20])
