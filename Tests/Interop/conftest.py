"""Fixtures for the interop tests: the real `pulsegate` binary, started on loopback.

- `ingest`: `pulsegate ingest --admin` on port 0 (its admin API is how the tests see what arrived).
- `gateway`: `pulsegate serve --upstream <ingest>` on port 0.

The binary is `$PULSEGATE_BIN`, else `.build/debug/pulsegate` (scripts/test-interop.sh sets it).
Every process gets a temporary data directory and is stopped with SIGTERM at the end.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEADLINE_SECONDS = 60.0


def pulsegate_binary() -> str:
    path = os.environ.get("PULSEGATE_BIN") or str(REPO / ".build" / "debug" / "pulsegate")
    if not os.access(path, os.X_OK):
        pytest.fail(f"pulsegate binary not found at {path}: build it (swift build) or set PULSEGATE_BIN")
    return path


@dataclass
class Service:
    """A started process (`pulsegate`, Rotel) and the lines it printed."""

    name: str
    process: subprocess.Popen
    lines: list[str] = field(default_factory=list)
    condition: threading.Condition = field(default_factory=threading.Condition)

    def wait_for_line(self, pattern: str) -> re.Match:
        regex = re.compile(pattern)
        deadline = time.monotonic() + DEADLINE_SECONDS
        with self.condition:
            while True:
                for line in self.lines:
                    if match := regex.search(line):
                        return match
                if self.process.poll() is not None:
                    raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n" + "".join(self.lines))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError(f"{self.name} did not print /{pattern}/ in time:\n" + "".join(self.lines))
                self.condition.wait(remaining)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_service(name: str, arguments: list[str]) -> Service:
    """Starts `pulsegate <arguments>` with stdout and stderr merged and collected line by line."""
    return start_process(name, [pulsegate_binary(), *arguments])


def start_process(name: str, command: list[str]) -> Service:
    """Starts `command` with stdout and stderr merged and collected line by line."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    service = Service(name, process)

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            with service.condition:
                service.lines.append(line)
                service.condition.notify_all()
        with service.condition:
            service.condition.notify_all()

    threading.Thread(target=pump, name=f"{name}-output", daemon=True).start()
    return service


def start_gateway(data_dir: str, upstream: str | None = None, config: dict | None = None) -> tuple[Service, str]:
    """`pulsegate serve` on a free loopback port; returns the service and its base URL."""
    arguments = ["serve", "--listen", "127.0.0.1:0", "--data-dir", data_dir]
    if upstream:
        arguments += ["--upstream", upstream]
    if config is not None:
        config_path = os.path.join(data_dir, "gateway-config.json")
        os.makedirs(data_dir, exist_ok=True)
        with open(config_path, "w", encoding="utf-8") as file:
            json.dump(config, file)
        arguments += ["--config", config_path]
    service = start_service("gateway", arguments)
    match = service.wait_for_line(r'"msg":"gateway listening".*"listen":"(127\.0\.0\.1:\d+)"')
    return service, f"http://{match.group(1)}"


@dataclass
class Ingest:
    service: Service
    address: str
    admin_url: str

    def get(self, path: str, **query: object) -> dict:
        url = f"{self.admin_url}{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.load(response)

    def events(self, app: str) -> list[dict]:
        return self.get("/events", app=app, limit=1000)["events"]

    def crashes(self, app: str) -> list[dict]:
        return self.get("/crashes", app=app, limit=1000)["crashes"]

    def connections(self, app: str) -> list[dict]:
        return self.get("/connections", app=app)["connections"]

    def wait_for_events(
        self, app: str, count: int, crashes: int = 0, counted=lambda events: events
    ) -> tuple[list[dict], list[dict]]:
        """Polls the admin API until `app` has at least `count` events (of those `counted` keeps)
        and `crashes` crash reports."""
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            events, reports = self.events(app), self.crashes(app)
            if len(counted(events)) >= count and len(reports) >= crashes:
                return events, reports
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"app {app}: expected {count} events and {crashes} crash reports upstream, "
                    f"got {len(events)} and {len(reports)}:\n{json.dumps(events, indent=1)[:4000]}"
                )
            time.sleep(0.1)


@pytest.fixture(scope="session")
def ingest():
    with tempfile.TemporaryDirectory(prefix="pulsegate-interop-ingest-") as data_dir:
        service = start_service(
            "ingest", ["ingest", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data-dir", data_dir]
        )
        try:
            match = service.wait_for_line(
                r"listening on (127\.0\.0\.1:\d+) \(msgtrans\), admin on (http://127\.0\.0\.1:\d+)"
            )
            yield Ingest(service, match.group(1), match.group(2))
        finally:
            service.stop()


@pytest.fixture(scope="session")
def gateway(ingest):
    """The gateway forwarding to `ingest`; yields its base URL."""
    with tempfile.TemporaryDirectory(prefix="pulsegate-interop-gateway-") as data_dir:
        service, url = start_gateway(data_dir, upstream=ingest.address)
        try:
            yield url
        finally:
            service.stop()


@contextlib.contextmanager
def stdlib_logger(name: str, logger_provider):
    """A standard-library logger whose records go through the SDK's `LoggingHandler` to
    `logger_provider` (as applications wire it) for the duration of the block."""
    from opentelemetry.sdk._logs import LoggingHandler

    logger = logging.getLogger(name)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    handler = LoggingHandler(level=logging.INFO, logger_provider=logger_provider)
    logger.addHandler(handler)
    try:
        yield logger
    finally:
        logger.removeHandler(handler)


def gateway_metric(url: str, name: str) -> float:
    """The value of a counter or gauge from the gateway's /metrics: `name` is the sample's text up to
    the value (`pulsegate_duplicates_total`, `pulsegate_http_requests_total{route="/v1/logs",code="200"}`)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return 0.0
