"""The OpenTelemetry Python SDK's OTLP/HTTP exporters against a running gateway.

Telemetry is recorded once with the SDK (tracer, logger, meter with real instruments) into its
in-memory exporters, then exported through the official exporters: the protobuf one
(`opentelemetry-exporter-otlp-proto-http`) to app `otel-proto` and the JSON one
(`opentelemetry-exporter-otlp-json-http`) to app `otel-json`. The tests then read what the
reference ingest server stored (admin API: /events, /crashes, /connections) and check identity,
kinds, names, ids and attribute values, and that both encodings map to the same Pulse events.
"""

from __future__ import annotations

import time

import pytest
from opentelemetry import trace
from opentelemetry._logs import SeverityNumber
from opentelemetry.metrics import Observation
from opentelemetry.exporter.otlp.json.http import OTLPMetricExporter as JSONMetricExporter
from opentelemetry.exporter.otlp.json.http import OTLPSpanExporter as JSONSpanExporter
from opentelemetry.exporter.otlp.json.http._log_exporter import OTLPLogExporter as JSONLogExporter
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as ProtoLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as ProtoMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as ProtoSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, LogRecordExportResult, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricExportResult
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from conftest import gateway_metric, stdlib_logger

RESOURCE = {
    "service.name": "interop-shop",
    "service.version": "3.2.1",
    "device.id": "python-device-0001",
    "app.installation.id": "python-install-0001",
    "os.name": "Android",
    "os.type": "linux",
    "os.version": "14",
    "host.arch": "arm64",
    "apsio.app.package_name": "com.example.shop",
    "user.id": "user-42",
}
LOG_UID = "0123456789abcdef0123456789abcdef"
CRASH_ID = "crash-python-0001"
ENCODINGS = ("proto", "json")


def app_for(encoding: str) -> str:
    return f"otel-{encoding}"


def record_telemetry():
    """Records logs, spans and metrics with the SDK; returns them as exporter input."""
    resource = Resource.create(RESOURCE)
    now = time.time_ns()

    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    tracer = tracer_provider.get_tracer("interop.http", "1.0.0")
    with tracer.start_as_current_span("checkout", start_time=now - 5_000_000_000) as parent:
        parent.set_attribute("cart.items", 3)
        with tracer.start_as_current_span(
            "GET /v1/items",
            kind=trace.SpanKind.CLIENT,
            start_time=now - 4_000_000_000,
            attributes={
                "http.request.method": "GET",
                "url.full": "https://api.example.com/v1/items?token=abc#frag",
                "http.response.status_code": 504,
                "retry": True,
            },
        ) as client:
            client.set_status(Status(StatusCode.ERROR, "gateway timeout"))
            client.end(end_time=now - 3_000_000_000)
        parent.end(end_time=now - 2_000_000_000)

    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    logger = logger_provider.get_logger("interop.logs", "1.0.0")
    logger.emit(
        timestamp=now - 10_000_000_000,
        severity_number=SeverityNumber.INFO,
        severity_text="INFO",
        event_name="checkout.completed",
        attributes={
            "log.record.uid": LOG_UID,
            "cart.items": 3,
            "cart.value": 12.5,
            "premium": True,
            "tags": ["a", "b"],
            "session.id": "session-7",
        },
    )
    logger.emit(
        timestamp=now - 9_000_000_000,
        severity_number=SeverityNumber.ERROR,
        severity_text="ERROR",
        body="payment failed",
        attributes={"exception.type": "TimeoutError", "auth.token": "s3cr3t", "order.id": "o-17"},
    )
    logger.emit(
        timestamp=now - 8_000_000_000,
        severity_number=SeverityNumber.INFO,
        event_name="breadcrumb.navigation",
        attributes={"screen": "cart"},
    )
    logger.emit(
        timestamp=now - 7_000_000_000,
        severity_number=SeverityNumber.INFO,
        body="frame drop",
        attributes={"apsio.event.kind": "Performance", "frames": 12},
    )
    logger.emit(
        timestamp=now - 6_000_000_000,
        severity_number=SeverityNumber.FATAL,
        severity_text="FATAL",
        event_name="device.crash",
        body="EXC_BAD_ACCESS",
        attributes={
            "app.crash.id": CRASH_ID,
            "exception.type": "SIGSEGV",
            "exception.message": "EXC_BAD_ACCESS at 0x0",
            "exception.stacktrace": "0 shop 0x1000 main\n1 libsystem 0x2000 start",
        },
    )
    # The standard library's logging through the SDK's handler.
    with stdlib_logger("interop.stdlib", logger_provider) as stdlib:
        stdlib.warning("disk at %d%%", 91)

    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(
        resource=resource,
        metric_readers=[reader],
        views=[View(instrument_name="app.payload.size", aggregation=ExponentialBucketHistogramAggregation())],
    )
    meter = meter_provider.get_meter("interop.metrics", "1.0.0")
    meter.create_counter("app.requests", unit="{request}").add(5, {"route": "/items"})
    latency = meter.create_histogram("app.latency", unit="ms")
    for value in (10, 20, 300):
        latency.record(value, {"route": "/items"})
    payload = meter.create_histogram("app.payload.size", unit="By")
    for value in (100, 2000):
        payload.record(value)
    meter.create_up_down_counter("app.queue.depth").add(-2)
    meter.create_observable_gauge(
        "process.runtime.cpython.memory",
        callbacks=[lambda options: [Observation(123.5, {"type": "rss"})]],
        unit="By",
    )
    metrics = reader.get_metrics_data()

    data = {"spans": spans.get_finished_spans(), "logs": logs.get_finished_logs(), "metrics": metrics}
    tracer_provider.shutdown()
    logger_provider.shutdown()
    meter_provider.shutdown()
    return data


EXPORTERS = {
    "proto": (ProtoSpanExporter, ProtoLogExporter, ProtoMetricExporter),
    "json": (JSONSpanExporter, JSONLogExporter, JSONMetricExporter),
}


@pytest.fixture(scope="module")
def exported(gateway, ingest):
    """Exports the same telemetry through both exporters; returns what arrived per encoding."""
    data = record_telemetry()
    for encoding in ENCODINGS:
        span_exporter, log_exporter, metric_exporter = EXPORTERS[encoding]
        headers = {"Apsio-App-Id": app_for(encoding)}
        spans = span_exporter(endpoint=f"{gateway}/v1/traces", headers=headers)
        assert spans.export(data["spans"]) == SpanExportResult.SUCCESS, encoding
        logs = log_exporter(endpoint=f"{gateway}/v1/logs", headers=headers)
        assert logs.export(data["logs"]) == LogRecordExportResult.SUCCESS, encoding
        metrics = metric_exporter(endpoint=f"{gateway}/v1/metrics", headers=headers)
        assert metrics.export(data["metrics"]) == MetricExportResult.SUCCESS, encoding
        for exporter in (spans, logs, metrics):
            exporter.shutdown()
    arrived = {}
    for encoding in ENCODINGS:
        # 2 spans + 5 log records that are events (the crash is a crash report) + 5 metric points.
        events, crashes = ingest.wait_for_events(app_for(encoding), 12, crashes=1)
        arrived[encoding] = {"events": events, "crashes": crashes, "data": data}
    return arrived


def signal(events: list[dict], name: str) -> list[dict]:
    return [item for item in events if item["event"]["attributes"]["otlp.signal"] == name]


def by_name(events: list[dict]) -> dict[str, dict]:
    named = {}
    for item in events:
        event = item["event"]
        assert event["name"] not in named, f"two events named {event['name']}"
        named[event["name"]] = item
    return named


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_identity(exported, ingest, encoding):
    events = exported[encoding]["events"]
    assert len(events) == 12
    assert {item["deviceId"] for item in events} == {RESOURCE["device.id"]}
    assert {item["installationId"] for item in events} == {RESOURCE["app.installation.id"]}
    connections = ingest.connections(app_for(encoding))
    assert connections, "the gateway never connected upstream for this app"
    for connection in connections:
        assert connection["deviceId"] == RESOURCE["device.id"]
        assert connection["installationId"] == RESOURCE["app.installation.id"]
        assert connection["platform"] == "android"  # os.name wins over os.type, lower-cased
        assert connection["sdkVersion"].startswith("opentelemetry/1.")
        assert connection["packageName"] == RESOURCE["apsio.app.package_name"]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_spans(exported, encoding):
    spans = {span.name: span for span in exported[encoding]["data"]["spans"]}
    events = by_name(signal(exported[encoding]["events"], "traces"))
    for name, kind in (("GET /v1/items", "Network"), ("checkout", "Performance")):
        span = spans[name]
        item = events[name]
        event = item["event"]
        trace_id = format(span.context.trace_id, "032x")
        span_id = format(span.context.span_id, "016x")
        assert event["kind"] == kind
        assert item["eventId"] == event["id"] == trace_id + span_id
        assert event["timestamp"] == span.start_time // 1_000_000
        assert event["source"]["module"] == "interop.http"
        attributes = event["attributes"]
        assert attributes["trace_id"] == trace_id
        assert attributes["span_id"] == span_id
        assert attributes["span.end_time_ms"] == span.end_time // 1_000_000
        assert attributes["otlp.signal"] == "traces"
    client = events["GET /v1/items"]["event"]["attributes"]
    assert client["url.full"] == "https://api.example.com/v1/items"  # query and fragment removed
    assert client["http.request.method"] == "GET"
    assert client["http.response.status_code"] == 504
    assert client["retry"] is True
    assert client["span.kind"] == 3  # CLIENT
    assert client["span.status_code"] == 2  # ERROR
    assert client["span.parent_span_id"] == format(spans["checkout"].context.span_id, "016x")
    assert events["checkout"]["event"]["attributes"]["cart.items"] == 3


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_logs(exported, encoding):
    logs = signal(exported[encoding]["events"], "logs")
    assert len(logs) == 5
    kinds = {}
    for item in logs:
        kinds.setdefault(item["event"]["kind"], []).append(item)
    assert sorted(kinds) == ["Analytics", "Breadcrumb", "Error", "Log", "Performance"]

    analytics = kinds["Analytics"][0]
    event = analytics["event"]
    assert analytics["eventId"] == event["id"] == LOG_UID  # log.record.uid is the event id
    assert event["name"] == "checkout.completed"
    assert event["sessionId"] == "session-7"
    assert event["source"]["module"] == "interop.logs"
    attributes = event["attributes"]
    assert attributes["cart.items"] == 3
    assert attributes["cart.value"] == 12.5
    assert attributes["premium"] is True
    assert attributes["tags"] == ["a", "b"]
    assert attributes["log.severity_number"] == 9

    error = kinds["Error"][0]["event"]
    assert error["name"] == "log"
    assert error["attributes"]["log.body"] == "payment failed"
    assert error["attributes"]["auth.token"] == "[REDACTED]"
    assert error["attributes"]["order.id"] == "o-17"
    assert error["attributes"]["exception.type"] == "TimeoutError"
    assert error["attributes"]["log.severity_text"] == "ERROR"

    assert kinds["Breadcrumb"][0]["event"]["name"] == "breadcrumb.navigation"
    assert kinds["Breadcrumb"][0]["event"]["attributes"]["screen"] == "cart"
    overridden = kinds["Performance"][0]["event"]
    assert overridden["attributes"]["log.body"] == "frame drop"
    assert overridden["attributes"]["frames"] == 12

    stdlib = kinds["Log"][0]["event"]
    assert stdlib["attributes"]["log.body"] == "disk at 91%"
    assert stdlib["attributes"]["log.severity_number"] == 13  # WARN
    assert stdlib["source"]["module"] == "interop.stdlib"
    # Records without log.record.uid get the derived id: 64 hex characters.
    for item in logs:
        if item is not analytics:
            assert len(item["eventId"]) == 64 and int(item["eventId"], 16) >= 0


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_crash_report(exported, encoding):
    crashes = exported[encoding]["crashes"]
    assert len(crashes) == 1
    report = crashes[0]
    crash = report["crash"]
    assert report["crashId"] == crash["crashId"] == CRASH_ID
    assert report["installationId"] == RESOURCE["app.installation.id"]
    assert crash["exceptionType"] == "SIGSEGV"
    assert crash["message"] == "EXC_BAD_ACCESS at 0x0"
    assert crash["stack"] == "0 shop 0x1000 main\n1 libsystem 0x2000 start"
    assert crash["build"]["appVersion"] == RESOURCE["service.version"]
    assert crash["build"]["osVersion"] == RESOURCE["os.version"]
    assert crash["build"]["architecture"] == RESOURCE["host.arch"]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_metrics(exported, encoding):
    events = by_name(signal(exported[encoding]["events"], "metrics"))
    assert set(events) == {
        "app.requests",
        "app.latency",
        "app.payload.size",
        "app.queue.depth",
        "process.runtime.cpython.memory",
    }
    for name, item in events.items():
        assert item["event"]["kind"] == ("Runtime" if name.startswith("process.") else "Performance")
        assert len(item["eventId"]) == 64  # SHA-256 of the series and the point's times
        assert item["event"]["source"]["module"] == "interop.metrics"

    requests = events["app.requests"]["event"]["attributes"]
    assert requests["metric.type"] == "sum"
    assert requests["metric.value"] == 5
    assert requests["metric.unit"] == "{request}"
    assert requests["route"] == "/items"

    latency = events["app.latency"]["event"]["attributes"]
    assert latency["metric.type"] == "histogram"
    assert latency["metric.count"] == 3
    assert latency["metric.sum"] == 330
    assert latency["metric.min"] == 10
    assert latency["metric.max"] == 300
    assert sum(latency["metric.bucket_counts"]) == 3
    assert len(latency["metric.bucket_counts"]) == len(latency["metric.explicit_bounds"]) + 1

    payload = events["app.payload.size"]["event"]["attributes"]
    assert payload["metric.type"] == "exponentialHistogram"
    assert payload["metric.count"] == 2
    assert payload["metric.sum"] == 2100
    assert isinstance(payload["metric.scale"], int)
    assert sum(payload["metric.positive"]["bucketCounts"]) == 2

    assert events["app.queue.depth"]["event"]["attributes"]["metric.value"] == -2
    memory = events["process.runtime.cpython.memory"]["event"]["attributes"]
    assert memory["metric.type"] == "gauge"
    assert memory["metric.value"] == 123.5
    assert memory["type"] == "rss"


def comparable(item: dict) -> dict:
    """An event without what legitimately differs between two apps: nothing but derived ids."""
    event = dict(item["event"])
    if len(event["id"]) == 64 and event["attributes"].get("otlp.signal") == "logs":
        event.pop("id")  # SHA-256 of (app id, batch id, position): differs per app by design
    return event


def test_protobuf_and_json_map_to_the_same_events(exported):
    def key(item):
        return (item["event"]["attributes"]["otlp.signal"], item["event"]["name"], item["event"]["timestamp"])

    proto = sorted(exported["proto"]["events"], key=key)
    json_ = sorted(exported["json"]["events"], key=key)
    assert [comparable(item) for item in proto] == [comparable(item) for item in json_]
    proto_crash = exported["proto"]["crashes"][0]["crash"]
    json_crash = exported["json"]["crashes"][0]["crash"]
    assert proto_crash == json_crash


def test_exporter_retry_is_deduplicated(exported, gateway, ingest):
    """An exporter re-sending identical bytes (no Apsio-Batch-Id) is acknowledged, stored once."""
    before = gateway_metric(gateway, "pulsegate_duplicates_total")
    exporter = ProtoSpanExporter(endpoint=f"{gateway}/v1/traces", headers={"Apsio-App-Id": app_for("proto")})
    assert exporter.export(exported["proto"]["data"]["spans"]) == SpanExportResult.SUCCESS
    exporter.shutdown()
    assert gateway_metric(gateway, "pulsegate_duplicates_total") == before + 1
    assert len(ingest.events(app_for("proto"))) == 12
