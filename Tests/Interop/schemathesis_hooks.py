"""Schemathesis hooks for openapi/pulsegate.yaml: two checks the built-in ones cannot make.

Loaded through `hooks` in schemathesis.toml (SCHEMATHESIS_HOOKS works too).

- `protobuf_answers`: an intake request sent as `application/x-protobuf` must be answered in
  protobuf: a 200 with an `Export*ServiceResponse` whose `partial_success` is consistent, an error
  with a `google.rpc.Status` whose code matches the HTTP status. (The spec can only describe these
  bodies as `format: binary`, so schema conformance cannot look inside them.)
- Request serializers for `application/json` and `application/x-protobuf` that honour a generated
  `Content-Encoding`: the body is really gzip/deflate/zstd-encoded when the header names known
  codings, so generated bodies reach the JSON parser and the protobuf decoder instead of all
  stopping at "compressed body is corrupt". (A header value outside the spec's pattern leaves the
  body as it is.) Protobuf bodies are the generated random bytes.
- `apsio_headers_rejected`: every `pattern` the spec puts on a header (`Apsio-Batch-Id`,
  `Apsio-App-Id`, `Apsio-Sent-At`, `Content-Encoding`) is enforced, so a request carrying a header
  value that does not match its pattern must get a 4xx, whatever the body (also when the body is
  valid, which the built-in `negative_data_rejection` check, on for the intake paths since the
  gateway rejects wrongly typed OTLP members, does not single out).
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import struct
import zlib

import schemathesis
import yaml
from schemathesis.transport.serialization import serialize_binary

from google.rpc import status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

INTAKE_RESPONSES = {
    "/v1/logs": (logs_service_pb2.ExportLogsServiceResponse, "rejected_log_records"),
    "/v1/traces": (trace_service_pb2.ExportTraceServiceResponse, "rejected_spans"),
    "/v1/metrics": (metrics_service_pb2.ExportMetricsServiceResponse, "rejected_data_points"),
}

def _encode(body: bytes, content_encoding: str | None) -> bytes:
    """`body` encoded with the codings of a `Content-Encoding` value, applied first to last."""
    if content_encoding is None:
        return body
    codings = [element.strip(" \t").lower() for element in content_encoding.split(",")]
    if len(codings) > 4 or any(coding not in CODERS for coding in codings):
        return body  # The gateway answers 415 before it looks at the body.
    for coding in codings:
        body = CODERS[coding](body)
    return body


def _zstd_raw_frame(body: bytes) -> bytes:
    """A valid zstd frame (RFC 8878) of raw, uncompressed blocks: magic number, a single-segment
    frame header with an 8-byte content size, then blocks of at most 128 KiB."""
    frame = bytearray(struct.pack("<IBQ", 0xFD2FB528, 0b1110_0000, len(body)))
    block = 128 * 1024
    chunks = [body[offset : offset + block] for offset in range(0, len(body), block)] or [b""]
    for index, chunk in enumerate(chunks):
        last = 1 if index == len(chunks) - 1 else 0
        header = (len(chunk) << 3) | (0 << 1) | last  # Block_Type 0 = Raw_Block
        frame += header.to_bytes(3, "little") + chunk
    return bytes(frame)


def _deflate(body: bytes) -> bytes:
    return zlib.compress(body)


CODERS = {
    "": lambda body: body,
    "identity": lambda body: body,
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": _deflate,
    "zstd": _zstd_raw_frame,
}


def _content_encoding(case) -> str | None:
    headers = case.headers or {}
    return headers.get("Content-Encoding")


def _json_default(value):
    # Generated `contentEncoding: base64` strings may arrive as raw bytes; send their base64 form.
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return str(value)


@schemathesis.serializer("application/json")
def json_body(ctx, value):
    if isinstance(value, bytes):
        return _encode(value, _content_encoding(ctx.case))
    text = json.dumps(value, default=_json_default)
    return _encode(text.encode("utf-8"), _content_encoding(ctx.case))


@schemathesis.serializer("application/x-protobuf")
def protobuf_body(ctx, value):
    return _encode(serialize_binary(value), _content_encoding(ctx.case))


# HTTP status → gRPC code of the Status body (docs/gateway.md; GatewayIntake.grpcCode).
GRPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 413: 3, 415: 3, 429: 8, 503: 14}


def _media_type(value: str | None) -> str:
    return (value or "").split(";", 1)[0].strip().lower()


@schemathesis.check
def protobuf_answers(ctx, response, case):
    if case.operation.path not in INTAKE_RESPONSES or case.method.upper() != "POST":
        return None
    if _media_type(case.media_type) != "application/x-protobuf":
        return None
    if not response.content and response.status_code in (413, 503):
        # 413 for a declared Content-Length above the limit and 503 during shutdown come from
        # the HTTP server before the intake runs: no body in any format.
        return None
    content_type = _media_type(response.headers.get("content-type", [""])[0])
    assert content_type == "application/x-protobuf", (
        f"protobuf request answered with Content-Type {content_type!r} (status {response.status_code})"
    )
    if response.status_code == 200:
        # Full success is the empty message, i.e. an empty body.
        message_type, rejected_field = INTAKE_RESPONSES[case.operation.path]
        message = message_type()
        message.ParseFromString(response.content)
        partial = message.partial_success
        rejected = getattr(partial, rejected_field)
        assert rejected >= 0, f"negative {rejected_field}"
        assert (rejected > 0) == bool(partial.error_message), (
            f"{rejected_field}={rejected} with error_message {partial.error_message!r}"
        )
        return None
    status = status_pb2.Status()
    status.ParseFromString(response.content)
    expected = GRPC_CODES.get(response.status_code)
    assert expected is not None, f"undocumented status {response.status_code}"
    assert status.code == expected, f"HTTP {response.status_code} with google.rpc.Status code {status.code}"
    assert status.message, "google.rpc.Status without a message"
    return None


@schemathesis.check
def apsio_headers_rejected(ctx, response, case):
    if case.operation.path not in INTAKE_RESPONSES or case.method.upper() != "POST":
        return None
    invalid = [
        f"{name}={value!r}"
        for name, pattern in HEADER_PATTERNS.items()
        if (value := (case.headers or {}).get(name)) is not None and not pattern.search(value)
    ]
    if invalid:
        assert 400 <= response.status_code < 500, (
            f"headers invalid under the spec ({', '.join(invalid)}) were accepted with {response.status_code}"
        )
    return None


def _header_patterns() -> dict[str, re.Pattern[str]]:
    """The `pattern` of every constrained intake header, read from the spec itself."""
    with open(SPEC_PATH, encoding="utf-8") as file:
        spec = yaml.safe_load(file)
    components = spec["components"]
    patterns = {}
    for parameter in components["parameters"].values():
        schema = parameter.get("schema", {})
        if "$ref" in schema:
            schema = components["schemas"][schema["$ref"].rsplit("/", 1)[1]]
        if parameter["in"] == "header" and "pattern" in schema:
            # ECMA-262 `$` is the end of input; Python's also matches before a final newline.
            pattern = schema["pattern"]
            if pattern.endswith("$"):
                pattern = pattern[:-1] + r"\Z"
            patterns[parameter["name"]] = re.compile(pattern)
    assert {"Apsio-Batch-Id", "Apsio-App-Id", "Apsio-Sent-At", "Content-Encoding"} <= patterns.keys()
    return patterns


SPEC_PATH = os.environ.get(
    "PULSEGATE_OPENAPI", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "openapi", "pulsegate.yaml")
)
HEADER_PATTERNS = _header_patterns()
