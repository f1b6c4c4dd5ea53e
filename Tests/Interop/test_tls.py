"""The OpenTelemetry Python SDK's OTLP/HTTP exporters against a gateway serving HTTPS itself
(`pulsegate serve --tls-cert --tls-key`), with a self-signed certificate made here by `openssl`.

The exporters trust it through their `certificate_file` setting (what
`OTEL_EXPORTER_OTLP_CERTIFICATE` sets); an exporter that does not trust it fails the export.
The protobuf exporters send with `requests`, which lets `REQUESTS_CA_BUNDLE` or `CURL_CA_BUNDLE`
override the exporter's `certificate_file` (docs/gateway.md, TLS), so the tests clear both.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile

import pytest
from opentelemetry.sdk._logs.export import LogRecordExportResult
from opentelemetry.sdk.metrics.export import MetricExportResult
from opentelemetry.sdk.trace.export import SpanExportResult

from conftest import start_service
from test_otel_exporters import ENCODINGS, EXPORTERS, RESOURCE, record_telemetry


def make_certificate(directory: str) -> tuple[str, str]:
    """A self-signed EC certificate for 127.0.0.1 and localhost; returns (certificate, key) paths."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("openssl is missing: apt-get install openssl (scripts/test installs it)")
    certificate, key = f"{directory}/gateway.crt", f"{directory}/gateway.key"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True,
    )
    return certificate, key


@pytest.fixture(scope="module")
def tls_gateway(ingest):
    """A gateway on HTTPS forwarding to `ingest`; yields (base URL, CA file)."""
    with tempfile.TemporaryDirectory(prefix="pulsegate-interop-tls-") as directory:
        certificate, key = make_certificate(directory)
        service = start_service(
            "gateway-tls",
            ["serve", "--listen", "127.0.0.1:0", "--data-dir", f"{directory}/data", "--upstream", ingest.address,
             "--tls-cert", certificate, "--tls-key", key],
        )
        try:
            match = service.wait_for_line(r'"msg":"gateway listening".*"listen":"(127\.0\.0\.1:\d+)","tls":"on"')
            yield f"https://{match.group(1)}", certificate
        finally:
            service.stop()


@pytest.fixture(autouse=True)
def no_ca_bundle_override(monkeypatch):
    for variable in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(variable, raising=False)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_exporters_deliver_over_https(tls_gateway, ingest, encoding):
    url, certificate = tls_gateway
    app = f"otel-tls-{encoding}"
    data = record_telemetry()
    span_exporter, log_exporter, metric_exporter = EXPORTERS[encoding]
    headers = {"Apsio-App-Id": app}
    exporters = [
        (span_exporter(endpoint=f"{url}/v1/traces", headers=headers, certificate_file=certificate), "spans",
         SpanExportResult.SUCCESS),
        (log_exporter(endpoint=f"{url}/v1/logs", headers=headers, certificate_file=certificate), "logs",
         LogRecordExportResult.SUCCESS),
        (metric_exporter(endpoint=f"{url}/v1/metrics", headers=headers, certificate_file=certificate), "metrics",
         MetricExportResult.SUCCESS),
    ]
    for exporter, kind, success in exporters:
        assert exporter.export(data[kind]) == success, kind
        exporter.shutdown()
    events, _ = ingest.wait_for_events(app, 12)
    assert len(events) == 12  # what the plain-HTTP test of the same telemetry gets
    assert {event["deviceId"] for event in events} == {RESOURCE["device.id"]}


def test_an_exporter_that_does_not_trust_the_certificate_fails(tls_gateway, ingest):
    url, _ = tls_gateway
    span_exporter = EXPORTERS["proto"][0]
    exporter = span_exporter(endpoint=f"{url}/v1/traces", headers={"Apsio-App-Id": "otel-tls-untrusted"}, timeout=2)
    assert exporter.export(record_telemetry()["spans"]) == SpanExportResult.FAILURE
    exporter.shutdown()
    assert ingest.events("otel-tls-untrusted") == []
