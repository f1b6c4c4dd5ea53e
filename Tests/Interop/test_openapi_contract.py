"""openapi/pulsegate.yaml against the real gateway, with schemathesis.

The gateway is `pulsegate serve` with its embedded reference ingest server (no --upstream), on a
free loopback port, with a temporary data directory (on /dev/shm when it exists: this test is about
the HTTP contract, not fsync latency) and `defaultAppId`, so requests without `Apsio-App-Id`
reach the mapper too. Settings and the two project-specific checks: schemathesis.toml and
schemathesis_hooks.py next to this file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
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
