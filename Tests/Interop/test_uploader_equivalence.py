"""The companion uploader and the OpenTelemetry Python exporters map the same way.

The same telemetry (an event, two log lines, a client span with its parent, a gauge, a sum and a
crash) is sent twice:

- with `pulsegate upload enqueue` + `pulsegate upload flush` (JSON lines in, OTLP/JSON out) as
  app `equiv-uploader`;
- with the Python SDK's protobuf exporter as app `equiv-python`, from records built to carry what
  docs/uploader.md says the uploader encodes for each kind (same resource identity, scope, times,
  trace and span ids, attributes).

The Pulse events that reach the ingest server are then compared field by field. What differs, by
design (docs/interop.md):

- the SDK version in the identity (`pulsegate-uploader/0.1.0` vs `opentelemetry/1.x`): it names the
  sender;
- `log.record.uid`: the uploader puts a random one on every log record (so its log events use it as
  their id); the Python records carry none, so their ids are derived from (app, batch, position);
- metric point ids: SHA-256 over the series, which includes the resource attributes, and the two
  senders' resources differ in `telemetry.sdk.*`.

Span event ids (trace id + span id) and the crash id are the same on both paths.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import tempfile
import time

import pytest
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, LogRecordExportResult, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    Gauge,
    Metric,
    MetricExportResult,
    MetricsData,
    NumberDataPoint,
    ResourceMetrics,
    ScopeMetrics,
    Sum,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanKind, Status, StatusCode

from conftest import pulsegate_binary

UPLOADER_APP = "equiv-uploader"
PYTHON_APP = "equiv-python"
DEVICE_ID = "equiv-device-0001"
INSTALLATION_ID = "equiv-install-0001"
APP_VERSION = "2.0.0"
SCOPE = ("pulsegate.uploader", "0.1.0")
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN_ID = "00f067aa0ba902b7"
CLIENT_SPAN_ID = "53995c3f42cd8ad8"
CRASH_ID = "crash-equiv-0001"
EXPECTED_EVENTS = 7  # event, 2 logs, 2 spans, 2 metric points (the crash is a crash report)


def epoch_ms(offset_seconds: float) -> int:
    return BASE_MS + int(offset_seconds * 1000)


BASE_MS = (int(time.time()) - 60) * 1000


def uploader_lines() -> list[dict]:
    return [
        {
            "type": "event",
            "name": "checkout",
            "timestamp": epoch_ms(1),
            "sessionId": "session-1",
            "attributes": {"items": 3, "value": 12.5, "premium": True, "coupon": "SPRING"},
        },
        {
            "type": "log",
            "body": "payment failed",
            "severity": "error",
            "timestamp": epoch_ms(2),
            "attributes": {"order.id": "o-17", "api_key": "k-123"},
        },
        {"type": "log", "body": "cache warm", "timestamp": epoch_ms(3)},
        {
            "type": "span",
            "name": "checkout",
            "traceId": TRACE_ID,
            "spanId": PARENT_SPAN_ID,
            "start": epoch_ms(4),
            "end": epoch_ms(9),
            "attributes": {"cart.items": 3},
        },
        {
            "type": "span",
            "name": "GET /v1/items",
            "traceId": TRACE_ID,
            "spanId": CLIENT_SPAN_ID,
            "parentSpanId": PARENT_SPAN_ID,
            "kind": "client",
            "start": epoch_ms(5),
            "end": epoch_ms(6),
            "status": "error",
            "statusMessage": "gateway timeout",
            "attributes": {"http.request.method": "GET", "url.full": "https://api.example.com/v1/items?page=2"},
        },
        {
            "type": "metric",
            "name": "memory.used",
            "value": 123.5,
            "unit": "By",
            "timestamp": epoch_ms(10),
            "attributes": {"pool": "heap"},
        },
        {
            "type": "metric",
            "name": "requests",
            "kind": "sum",
            "value": 7,
            "start": epoch_ms(0),
            "timestamp": epoch_ms(10),
            "attributes": {"route": "/items"},
        },
        {
            "type": "crash",
            "message": "EXC_BAD_ACCESS",
            "crashId": CRASH_ID,
            "exceptionType": "SIGSEGV",
            "stack": "0 shop 0x1000 main\n1 libsystem 0x2000 start",
            "timestamp": epoch_ms(11),
        },
    ]


def host_arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)


def python_resource() -> Resource:
    # The uploader's resource (docs/uploader.md, Resource attributes); telemetry.sdk.* stay the SDK's own.
    return Resource.create(
        {
            "device.id": DEVICE_ID,
            "app.installation.id": INSTALLATION_ID,
            "service.name": PYTHON_APP,
            "service.version": APP_VERSION,
            "os.type": "linux",
            "os.version": platform.release(),
            "host.arch": host_arch(),
        }
    )


class FixedIds(IdGenerator):
    def __init__(self) -> None:
        self.span_ids = [int(PARENT_SPAN_ID, 16), int(CLIENT_SPAN_ID, 16)]

    def generate_trace_id(self) -> int:
        return int(TRACE_ID, 16)

    def generate_span_id(self) -> int:
        return self.span_ids.pop(0)


def ns(milliseconds: int) -> int:
    return milliseconds * 1_000_000


def send_with_python(gateway: str) -> None:
    """The same records through the Python SDK and its protobuf exporter, encoded the way the
    uploader encodes each kind (event → log record with eventName and event.name, INFO; crash →
    FATAL `device.crash` with the exception attributes; …)."""
    resource = python_resource()
    headers = {"Apsio-App-Id": PYTHON_APP}

    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    logger = logger_provider.get_logger(*SCOPE)
    logger.emit(
        timestamp=ns(epoch_ms(1)),
        severity_number=SeverityNumber.INFO,
        severity_text="INFO",
        event_name="checkout",
        attributes={
            "coupon": "SPRING",
            "event.name": "checkout",
            "items": 3,
            "premium": True,
            "session.id": "session-1",
            "value": 12.5,
        },
    )
    logger.emit(
        timestamp=ns(epoch_ms(2)),
        severity_number=SeverityNumber.ERROR,
        severity_text="ERROR",
        body="payment failed",
        attributes={"api_key": "k-123", "order.id": "o-17"},
    )
    logger.emit(timestamp=ns(epoch_ms(3)), severity_number=SeverityNumber.INFO, severity_text="INFO", body="cache warm")
    logger.emit(
        timestamp=ns(epoch_ms(11)),
        severity_number=SeverityNumber.FATAL,
        severity_text="FATAL",
        event_name="device.crash",
        body="EXC_BAD_ACCESS",
        attributes={
            "app.crash.id": CRASH_ID,
            "event.name": "device.crash",
            "exception.message": "EXC_BAD_ACCESS",
            "exception.stacktrace": "0 shop 0x1000 main\n1 libsystem 0x2000 start",
            "exception.type": "SIGSEGV",
        },
    )
    exporter = OTLPLogExporter(endpoint=f"{gateway}/v1/logs", headers=headers)
    assert exporter.export(logs.get_finished_logs()) == LogRecordExportResult.SUCCESS
    exporter.shutdown()
    logger_provider.shutdown()

    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=resource, id_generator=FixedIds())
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    tracer = tracer_provider.get_tracer(*SCOPE)
    parent = tracer.start_span("checkout", start_time=ns(epoch_ms(4)), attributes={"cart.items": 3})
    from opentelemetry import trace

    child = tracer.start_span(
        "GET /v1/items",
        context=trace.set_span_in_context(parent),
        kind=SpanKind.CLIENT,
        start_time=ns(epoch_ms(5)),
        attributes={"http.request.method": "GET", "url.full": "https://api.example.com/v1/items?page=2"},
    )
    child.set_status(Status(StatusCode.ERROR, "gateway timeout"))
    child.end(end_time=ns(epoch_ms(6)))
    parent.end(end_time=ns(epoch_ms(9)))
    exporter = OTLPSpanExporter(endpoint=f"{gateway}/v1/traces", headers=headers)
    assert exporter.export(spans.get_finished_spans()) == SpanExportResult.SUCCESS
    exporter.shutdown()
    tracer_provider.shutdown()

    # Metric points with the uploader's timestamps need the SDK's data classes: its instruments
    # stamp collection time.
    scope = InstrumentationScope(*SCOPE)
    gauge = Metric(
        name="memory.used",
        description=None,
        unit="By",
        data=Gauge(
            data_points=[
                NumberDataPoint(
                    attributes={"pool": "heap"},
                    start_time_unix_nano=ns(epoch_ms(10)),
                    time_unix_nano=ns(epoch_ms(10)),
                    value=123.5,
                )
            ]
        ),
    )
    total = Metric(
        name="requests",
        description=None,
        unit=None,
        data=Sum(
            data_points=[
                NumberDataPoint(
                    attributes={"route": "/items"},
                    start_time_unix_nano=ns(epoch_ms(0)),
                    time_unix_nano=ns(epoch_ms(10)),
                    value=7,
                )
            ],
            aggregation_temporality=AggregationTemporality.CUMULATIVE,
            is_monotonic=True,
        ),
    )
    data = MetricsData(
        resource_metrics=[
            ResourceMetrics(
                resource=resource,
                scope_metrics=[ScopeMetrics(scope=scope, metrics=[gauge, total], schema_url="")],
                schema_url="",
            )
        ]
    )
    exporter = OTLPMetricExporter(endpoint=f"{gateway}/v1/metrics", headers=headers)
    assert exporter.export(data) == MetricExportResult.SUCCESS
    exporter.shutdown()


def send_with_uploader(gateway: str, data_dir: str) -> None:
    common = [
        "--app-id",
        UPLOADER_APP,
        "--endpoint",
        gateway,
        "--data-dir",
        data_dir,
        "--device-id",
        DEVICE_ID,
        "--installation-id",
        INSTALLATION_ID,
        "--app-version",
        APP_VERSION,
    ]
    lines = "".join(json.dumps(line) + "\n" for line in uploader_lines())
    environment = dict(os.environ, PULSEGATE_NETWORK="unmetered", PULSEGATE_POWER="normal")
    enqueue = subprocess.run(
        [pulsegate_binary(), "upload", "enqueue", "--no-background", *common],
        input=lines,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )
    assert enqueue.returncode == 0, f"enqueue failed:\n{enqueue.stdout}\n{enqueue.stderr}"
    assert enqueue.stdout.count("ok ") == len(uploader_lines()), enqueue.stdout
    flush = subprocess.run(
        [pulsegate_binary(), "upload", "flush", *common],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )
    assert flush.returncode == 0, f"flush failed:\n{flush.stdout}\n{flush.stderr}"


@pytest.fixture(scope="module")
def both(gateway, ingest):
    with tempfile.TemporaryDirectory(prefix="pulsegate-interop-uploader-") as data_dir:
        send_with_uploader(gateway, data_dir)
    send_with_python(gateway)
    events, crashes = ingest.wait_for_events(UPLOADER_APP, EXPECTED_EVENTS, crashes=1, counted=without_diagnostics)
    # The uploader adds its own diagnostics record (docs/diagnostics.md) to every sealed batch; the
    # Python exporters have none. Those records travel as Runtime events and are compared apart.
    diagnostics = [item for item in events if item["event"]["name"] == DIAGNOSTICS_EVENT]
    python = ingest.wait_for_events(PYTHON_APP, EXPECTED_EVENTS, crashes=1)
    return {"uploader": (without_diagnostics(events), crashes), "python": python, "diagnostics": diagnostics}


DIAGNOSTICS_EVENT = "pulsegate.diagnostics"


def without_diagnostics(events: list[dict]) -> list[dict]:
    return [item for item in events if item["event"]["name"] != DIAGNOSTICS_EVENT]


def test_uploader_batches_carry_a_diagnostics_record(both):
    records = both["diagnostics"]
    assert records, "every sealed uploader batch carries a pulsegate.diagnostics record"
    sequences = set()
    for item in records:
        event = item["event"]
        assert event["kind"] == "Runtime"
        assert (item["deviceId"], item["installationId"]) == (DEVICE_ID, INSTALLATION_ID)
        sequences.add(int(event["attributes"]["pulsegate.batch.sequence"]))
    assert len(sequences) == len(records), "each batch has its own sequence number"


def keyed(events: list[dict]) -> dict[tuple, dict]:
    result = {}
    for item in events:
        event = item["event"]
        key = (event["attributes"]["otlp.signal"], event["name"], event["timestamp"])
        assert key not in result, f"two events {key}"
        result[key] = item
    return result


def test_same_events_both_ways(both):
    uploader = keyed(both["uploader"][0])
    python = keyed(both["python"][0])
    assert len(uploader) == len(python) == EXPECTED_EVENTS
    assert uploader.keys() == python.keys()
    for key in uploader:
        mine, theirs = uploader[key], python[key]
        assert (mine["deviceId"], mine["installationId"]) == (theirs["deviceId"], theirs["installationId"]) == (
            DEVICE_ID,
            INSTALLATION_ID,
        )
        a, b = dict(mine["event"]), dict(theirs["event"])
        a_attributes, b_attributes = dict(a.pop("attributes")), dict(b.pop("attributes"))
        id_a, id_b = a.pop("id"), b.pop("id")
        assert a == b, key  # kind, name, timestamp, sessionId, source
        signal = key[0]
        if signal == "logs":
            # The uploader's random record id travels as log.record.uid and becomes the event id.
            assert id_a == a_attributes.pop("log.record.uid")
            assert len(id_b) == 64 and "log.record.uid" not in b_attributes
        elif signal == "traces":
            assert id_a == id_b == TRACE_ID + a_attributes["span_id"]
        else:
            assert len(id_a) == len(id_b) == 64  # series hashes over different resources
        assert a_attributes == b_attributes, key


def test_kinds_and_redaction_on_both_paths(both):
    for side in ("uploader", "python"):
        events = keyed(both[side][0])
        kinds = {key[1]: item["event"]["kind"] for key, item in events.items() if key[0] != "logs"}
        assert kinds == {
            "checkout": "Performance",
            "GET /v1/items": "Network",
            "memory.used": "Performance",
            "requests": "Performance",
        }, side
        by_body = {
            item["event"]["attributes"].get("log.body"): item["event"] for key, item in events.items() if key[0] == "logs"
        }
        assert by_body["payment failed"]["kind"] == "Error"
        assert by_body["payment failed"]["attributes"]["api_key"] == "[REDACTED]"
        assert by_body["cache warm"]["kind"] == "Log"
        assert by_body[None]["kind"] == "Analytics" and by_body[None]["name"] == "checkout"
        client = next(item["event"] for key, item in events.items() if key[1] == "GET /v1/items")
        assert client["attributes"]["url.full"] == "https://api.example.com/v1/items"


def test_identity_differs_only_in_sdk_version(both, ingest):
    uploader = ingest.connections(UPLOADER_APP)
    python = ingest.connections(PYTHON_APP)
    assert uploader and python
    for connection in uploader + python:
        assert (connection["deviceId"], connection["installationId"], connection["platform"]) == (
            DEVICE_ID,
            INSTALLATION_ID,
            "linux",
        )
    assert {c["sdkVersion"] for c in uploader} == {"pulsegate-uploader/0.1.0"}
    assert all(c["sdkVersion"].startswith("opentelemetry/1.") for c in python)


def test_same_crash_report_both_ways(both):
    (uploader,) = both["uploader"][1]
    (python,) = both["python"][1]
    assert uploader["crashId"] == python["crashId"] == CRASH_ID
    a, b = dict(uploader["crash"]), dict(python["crash"])
    a_attributes, b_attributes = dict(a.pop("attributes")), dict(b.pop("attributes"))
    a_attributes.pop("log.record.uid")
    assert a == b  # crash id, timestamp, exception, message, stack, build (app version, os, arch)
    assert a_attributes == b_attributes
    assert a["build"]["appVersion"] == APP_VERSION
