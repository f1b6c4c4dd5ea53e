"""Stock OpenTelemetry clients against the real gateway, configured as docs/clients.md says.

- The OpenTelemetry Python SDK with nothing but a service name (`OTEL_SERVICE_NAME`), its OTLP/HTTP
  exporters configured by the standard environment variables (endpoint, headers, compression),
  protobuf and JSON, through the SDK's own batching processors and periodic metric reader: every
  request gets 200 and every record reaches the upstream, identified by the SDK's
  `service.instance.id` (docs/mapping.md, "Identity").
- A resource carrying no identity at all (`Resource({"service.name": …})`): a derived identity,
  stable across requests and different per service and host; refused with 400 for an app whose
  `appIdentity` says `refuse`.
- Rotel (PyPI `rotel`, the `rotel-agent` binary) in front of the gateway: its OTLP/HTTP protobuf
  exporter with the Apsio headers and an app key delivers; its default protocol, gRPC, fails.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest
import rotel
from opentelemetry.exporter.otlp.json.http import OTLPMetricExporter as JSONMetricExporter
from opentelemetry.exporter.otlp.json.http import OTLPSpanExporter as JSONSpanExporter
from opentelemetry.exporter.otlp.json.http._log_exporter import OTLPLogExporter as JSONLogExporter
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as ProtoLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as ProtoMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as ProtoSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from conftest import DEADLINE_SECONDS, REPO, gateway_metric, start_gateway, start_process, stdlib_logger

EXPORTERS = {
    "proto": (ProtoSpanExporter, ProtoLogExporter, ProtoMetricExporter),
    "json": (JSONSpanExporter, JSONLogExporter, JSONMetricExporter),
}
# What one run of the stock app sends: 2 spans, 2 log records, 2 metric points.
EVENTS_PER_RUN = 6
ROTEL_KEY = "rotel-key-1"
STOCK_KEY = "stock-key-1"
GATEWAY_CONFIG = {
    "appKeys": {
        "rotel-app": [ROTEL_KEY],
        "rotel-grpc": [ROTEL_KEY],
        "stock-proto": [STOCK_KEY],
        "stock-json": [STOCK_KEY],
    },
    "appIdentity": {"apps": {"stock-strict": {"missingIdentity": "refuse"}}},
}
SIGNAL_ROUTES = ("/v1/traces", "/v1/logs", "/v1/metrics")


@pytest.fixture(scope="module")
def gateway_service(ingest):
    """A gateway of this module's own (its /metrics counts only these tests' requests)."""
    with tempfile.TemporaryDirectory(prefix="pulsegate-interop-stock-") as data_dir:
        service, url = start_gateway(data_dir, upstream=ingest.address, config=GATEWAY_CONFIG)
        try:
            yield service, url
        finally:
            service.stop()


@pytest.fixture(scope="module")
def stock_gateway(gateway_service):
    return gateway_service[1]


@contextlib.contextmanager
def environment(**variables: str):
    """Sets environment variables for the block (the SDK reads its configuration from them)."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_stock_app(resource: Resource, exporters) -> Resource:
    """What an application does: providers with the SDK's batching processors and periodic metric
    reader around the given exporter classes (constructed without arguments, so they read the
    OTEL_EXPORTER_OTLP_* variables), a little telemetry, then shutdown (which flushes)."""
    span_exporter, log_exporter, metric_exporter = exporters
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter()))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter()))
    meter_provider = MeterProvider(
        resource=resource,
        metric_readers=[PeriodicExportingMetricReader(metric_exporter(), export_interval_millis=3_600_000)],
    )

    tracer = tracer_provider.get_tracer("stock.app", "1.0.0")
    with tracer.start_as_current_span("checkout"):
        with tracer.start_as_current_span("load cart"):
            pass
    with stdlib_logger("stock.app", logger_provider) as app_logger:
        app_logger.info("cart has %d items", 3)
        app_logger.error("payment failed")
    meter = meter_provider.get_meter("stock.app", "1.0.0")
    meter.create_counter("checkout.count").add(1, {"route": "/checkout"})
    meter.create_histogram("checkout.duration", unit="ms").record(42.0)

    tracer_provider.shutdown()
    logger_provider.shutdown()
    meter_provider.shutdown()
    return resource


def signal_counts(url: str, code: int) -> dict[str, float]:
    return {
        route: gateway_metric(url, f'pulsegate_http_requests_total{{route="{route}",code="{code}"}}')
        for route in SIGNAL_ROUTES
    }


def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {route: after[route] - before[route] for route in before}


def derived_id(app: str, attributes: dict[str, str]) -> str:
    """docs/mapping.md's derived id, computed here from the documentation: `derived-` + the first 32
    hex characters of SHA-256 of length-prefixed fields (8-byte big-endian length, then the UTF-8
    bytes): `pulsegate.derived-identity.1`, the App ID, then key and value of each attribute
    present among the documented keys, in their documented order."""
    keys = (
        "service.namespace",
        "service.name",
        "deployment.environment.name",
        "host.name",
        "k8s.namespace.name",
        "k8s.pod.name",
        "container.id",
    )
    fields = ["pulsegate.derived-identity.1", app]
    for key in keys:
        if key in attributes:
            fields += [key, attributes[key]]
    digest = hashlib.sha256()
    for text in fields:
        data = text.encode()
        digest.update(len(data).to_bytes(8, "big") + data)
    return "derived-" + digest.hexdigest()[:32]


def kinds(events: list[dict]) -> dict[str, int]:
    counted: dict[str, int] = {}
    for item in events:
        name = item["event"]["attributes"]["otlp.signal"]
        counted[name] = counted.get(name, 0) + 1
    return counted


# --- The Python SDK with only a service name -----------------------------------------------------


@pytest.mark.parametrize("encoding", ["proto", "json"])
def test_stock_python_sdk_with_only_a_service_name_delivers(stock_gateway, ingest, encoding):
    app = f"stock-{encoding}"
    ok_before, bad_before = signal_counts(stock_gateway, 200), signal_counts(stock_gateway, 400)
    # docs/clients.md, "OpenTelemetry Python": the standard variables and nothing else.
    with environment(
        OTEL_SERVICE_NAME="stock-python",
        OTEL_EXPORTER_OTLP_ENDPOINT=stock_gateway,
        # Values are URL-encoded (W3C baggage format): %20 is the space after "Bearer".
        OTEL_EXPORTER_OTLP_HEADERS=f"Apsio-App-Id={app},Authorization=Bearer%20{STOCK_KEY}",
        OTEL_EXPORTER_OTLP_COMPRESSION="gzip",
    ):
        resource = run_stock_app(Resource.create(), EXPORTERS[encoding])
    attributes = dict(resource.attributes)
    assert set(attributes) == {
        "service.name",
        "service.instance.id",
        "telemetry.sdk.language",
        "telemetry.sdk.name",
        "telemetry.sdk.version",
    }, "the SDK's default resource changed; docs/clients.md describes this one"

    # Every export request was accepted (one per signal, with the app key), none refused.
    assert delta(ok_before, signal_counts(stock_gateway, 200)) == {route: 1 for route in SIGNAL_ROUTES}
    assert delta(bad_before, signal_counts(stock_gateway, 400)) == {route: 0 for route in SIGNAL_ROUTES}

    events, _ = ingest.wait_for_events(app, EVENTS_PER_RUN)
    assert len(events) == EVENTS_PER_RUN
    assert kinds(events) == {"traces": 2, "logs": 2, "metrics": 2}
    instance = attributes["service.instance.id"]
    assert {(item["installationId"], item["deviceId"]) for item in events} == {(instance, instance)}
    by_name = {item["event"]["name"]: item["event"] for item in events}
    assert by_name["checkout"]["kind"] == "Performance"
    assert {"checkout", "load cart", "checkout.count", "checkout.duration"} <= set(by_name)
    logs = sorted(item["event"]["attributes"]["log.body"] for item in events if item["event"]["name"] == "log")
    assert logs == ["cart has 3 items", "payment failed"]
    connections = ingest.connections(app)
    assert connections
    for connection in connections:
        assert connection["installationId"] == connection["deviceId"] == instance
        assert connection["platform"] == "python"  # telemetry.sdk.language
        assert connection["sdkVersion"] == f"opentelemetry/{attributes['telemetry.sdk.version']}"


# --- A resource with no identity at all ------------------------------------------------------------


def test_a_resource_without_identity_gets_a_stable_derived_one(stock_gateway, gateway_service, ingest):
    service, _ = gateway_service
    app = "stock-derived"
    derived_before = gateway_metric(stock_gateway, "pulsegate_derived_identities_total")
    checkout = {"service.name": "bare-checkout", "host.name": "build-7"}
    billing = {"service.name": "bare-billing", "host.name": "build-7"}
    with environment(OTEL_EXPORTER_OTLP_ENDPOINT=stock_gateway, OTEL_EXPORTER_OTLP_HEADERS=f"Apsio-App-Id={app}"):
        # The plain constructor: no SDK defaults, so no instance id, no telemetry.sdk.*.
        run_stock_app(Resource(checkout), EXPORTERS["proto"])
        run_stock_app(Resource(checkout), EXPORTERS["json"])  # a later run of the same service
        run_stock_app(Resource(billing), EXPORTERS["proto"])
    events, _ = ingest.wait_for_events(app, 3 * EVENTS_PER_RUN)
    assert len(events) == 3 * EVENTS_PER_RUN
    ids = {}
    for item in events:
        assert item["installationId"] == item["deviceId"]
        ids[item["installationId"]] = ids.get(item["installationId"], 0) + 1
    # Stable across requests and runs (6 requests of checkout share one id), one per service.
    assert ids == {derived_id(app, checkout): 2 * EVENTS_PER_RUN, derived_id(app, billing): EVENTS_PER_RUN}
    for connection in ingest.connections(app):
        assert connection["installationId"].startswith("derived-")
        assert connection["platform"] == "unknown"
        assert connection["sdkVersion"] == "unknown"
    # Marked: counted per resource of each accepted request, and logged.
    assert gateway_metric(stock_gateway, "pulsegate_derived_identities_total") == derived_before + 9
    line = service.wait_for_line(
        r'"msg":"identity derived for a resource that does not carry it".*"app":"stock-derived"'
    )
    assert '"from":"service.name,host.name"' in line.string


def test_an_app_that_refuses_derived_identities_gets_the_400(stock_gateway, ingest):
    app = "stock-strict"
    bad_before = signal_counts(stock_gateway, 400)
    with environment(OTEL_EXPORTER_OTLP_ENDPOINT=stock_gateway, OTEL_EXPORTER_OTLP_HEADERS=f"Apsio-App-Id={app}"):
        run_stock_app(Resource({"service.name": "bare-checkout"}), EXPORTERS["proto"])
    assert delta(bad_before, signal_counts(stock_gateway, 400)) == {route: 1 for route in SIGNAL_ROUTES}
    assert ingest.events(app) == []
    # The message, as a client that reads the body sees it.
    body = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "bare-checkout"}}]},
                "scopeSpans": [{"spans": [{"traceId": "1" * 32, "spanId": "2" * 16, "name": "s"}]}],
            }
        ]
    }
    request = urllib.request.Request(
        f"{stock_gateway}/v1/traces",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Apsio-App-Id": app},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 400
    assert json.load(refused.value)["message"].startswith("resource 0: missing deviceId and installationId")


# --- Rotel in front ----------------------------------------------------------------------------------


def rotel_agent() -> str:
    path = os.path.join(os.path.dirname(rotel.__file__), "rotel-agent")
    assert os.access(path, os.X_OK), f"no rotel-agent binary at {path}"
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def running_rotel(exporter_arguments: list[str]):
    """Rotel with its OTLP/HTTP receiver on a free loopback port (the gRPC receiver on another) and
    the given exporter flags; yields the process and the receiver's URL once it answers."""
    with tempfile.TemporaryDirectory(prefix="pulsegate-interop-rotel-") as directory:
        http_port, grpc_port = free_port(), free_port()
        process = start_process(
            "rotel",
            [
                rotel_agent(),
                "start",
                "--otlp-http-endpoint",
                f"127.0.0.1:{http_port}",
                "--otlp-grpc-endpoint",
                f"127.0.0.1:{grpc_port}",
                "--pid-file",
                os.path.join(directory, "rotel.pid"),
                *exporter_arguments,
            ],
        )
        try:
            url = f"http://127.0.0.1:{http_port}"
            deadline = time.monotonic() + DEADLINE_SECONDS
            while True:
                probe = urllib.request.Request(
                    f"{url}/v1/logs", data=b'{"resourceLogs":[]}', headers={"Content-Type": "application/json"}
                )
                try:
                    urllib.request.urlopen(probe, timeout=5).close()
                    break
                except (urllib.error.URLError, ConnectionError):
                    assert process.process.poll() is None, "rotel exited:\n" + "".join(process.lines)
                    assert time.monotonic() < deadline, "rotel did not answer:\n" + "".join(process.lines)
                    time.sleep(0.1)
            yield process, url
        finally:
            process.stop()


def rotel_exporter_flags(gateway: str, app: str) -> list[str]:
    """docs/clients.md, "Rotel": the OTLP exporter over HTTP (protobuf), with the Apsio headers."""
    return [
        "--exporter",
        "otlp",
        "--otlp-exporter-endpoint",
        gateway,
        "--otlp-exporter-protocol",
        "http",
        "--otlp-exporter-compression",
        "gzip",
        "--otlp-exporter-custom-headers",
        f"Apsio-App-Id={app},Authorization=Bearer {ROTEL_KEY}",
        "--otlp-exporter-retry-initial-backoff",
        "1s",
        "--otlp-exporter-retry-max-backoff",
        "30s",
        "--otlp-exporter-retry-max-elapsed-time",
        "3600s",
    ]


def test_rotel_otlp_http_exporter_with_headers_delivers(stock_gateway, ingest):
    app = "rotel-app"
    ok_before = signal_counts(stock_gateway, 200)
    with running_rotel(rotel_exporter_flags(stock_gateway, app)) as (process, url):
        # The application talks to Rotel; Rotel forwards to the gateway.
        with environment(
            OTEL_SERVICE_NAME="rotel-fronted",
            OTEL_EXPORTER_OTLP_ENDPOINT=url,
            OTEL_EXPORTER_OTLP_HEADERS="",
            OTEL_EXPORTER_OTLP_COMPRESSION="gzip",
        ):
            resource = run_stock_app(Resource.create(), EXPORTERS["proto"])
        events, _ = ingest.wait_for_events(app, EVENTS_PER_RUN)
    assert len(events) == EVENTS_PER_RUN
    assert kinds(events) == {"traces": 2, "logs": 2, "metrics": 2}
    instance = resource.attributes["service.instance.id"]
    assert {(item["installationId"], item["deviceId"]) for item in events} == {(instance, instance)}
    for connection in ingest.connections(app):
        assert connection["platform"] == "python"
    # The app has a key: Rotel's Authorization header carried it on every request.
    accepted = delta(ok_before, signal_counts(stock_gateway, 200))
    assert all(count >= 1 for count in accepted.values()), accepted


def test_rotel_default_grpc_exporter_fails_against_the_gateway(stock_gateway, ingest):
    """The gateway speaks OTLP/HTTP only: Rotel's default exporter protocol (gRPC, HTTP/2) gets a
    GOAWAY and Rotel drops the data. `--otlp-exporter-protocol http` is required."""
    app = "rotel-grpc"
    flags = [
        "--exporter",
        "otlp",
        "--otlp-exporter-endpoint",
        stock_gateway,
        "--otlp-exporter-custom-headers",
        f"Apsio-App-Id={app},Authorization=Bearer {ROTEL_KEY}",
    ]
    with running_rotel(flags) as (process, url):
        with environment(
            OTEL_SERVICE_NAME="rotel-grpc", OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_EXPORTER_OTLP_HEADERS=""
        ):
            run_stock_app(Resource.create(), EXPORTERS["proto"])
        failure = process.wait_for_line(r"Exporting failed, dropping data\..*")
    assert re.search(r"GoAway", failure.group(0)), failure.group(0)
    assert ingest.events(app) == []


def test_the_curl_script_of_the_docs_delivers(stock_gateway, ingest):
    """docs/examples/send-otlp-log.sh (docs/clients.md, "curl"): OTLP/JSON, gzip, a batch id per
    batch, the Apsio identity headers."""
    app = "curl-app"
    script = REPO / "docs" / "examples" / "send-otlp-log.sh"
    run = subprocess.run(
        [str(script), 'nightly export "finished"'],
        env={**os.environ, "PULSEGATE_URL": stock_gateway, "PULSEGATE_APP_ID": app, "PULSEGATE_DEVICE_ID": "build-7"},
        capture_output=True,
        text=True,
        timeout=DEADLINE_SECONDS,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("accepted (batch "), run.stdout
    events, _ = ingest.wait_for_events(app, 1)
    assert len(events) == 1
    assert events[0]["deviceId"] == events[0]["installationId"] == "build-7"
    assert events[0]["event"]["attributes"]["log.body"] == 'nightly export "finished"'
    assert events[0]["event"]["source"]["module"] == "curl"
    for connection in ingest.connections(app):
        assert connection["platform"] == "linux"
        assert connection["sdkVersion"].startswith("curl/")
