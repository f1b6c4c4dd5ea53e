#!/usr/bin/env python3
"""Generates the OTLPProtobuf test fixtures with the official OpenTelemetry protobuf classes.

Usage (the virtual environment lives outside the repository):

    python3 -m venv /work/venv-protobuf
    /work/venv-protobuf/bin/pip install opentelemetry-proto
    /work/venv-protobuf/bin/python scripts/generate-otlp-protobuf-fixtures.py

Writes Tests/OTLPProtobufTests/Fixtures/:

- <signal>-<name>.pb and <signal>-<name>.json: an export request serialized by the official
  library (or assembled byte by byte for wire-level cases and then parsed by it), and the JSON the
  library's json_format produces for it, with OTLP's one exception applied: traceId, spanId and
  parentSpanId are lowercase hex instead of base64. Enums are integers (use_integers_for_enums).
- invalid-<name>.pb plus invalid.json: malformed requests with the error code and field path the
  transcoder must report, and whether the official parser rejects them too.
- responses.json: Export*ServiceResponse and google.rpc.Status encodings from the official library.

The tests never run Python: the fixtures are checked in.
"""

import base64
import json
import math
import os
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.metrics.v1 import metrics_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "OTLPProtobufTests", "Fixtures")

REQUESTS = {
    "logs": logs_service_pb2.ExportLogsServiceRequest,
    "traces": trace_service_pb2.ExportTraceServiceRequest,
    "metrics": metrics_service_pb2.ExportMetricsServiceRequest,
}

HEX_FIELDS = {"traceId", "spanId", "parentSpanId"}

TRACE_ID = bytes.fromhex("5b8efff798038103d269b633813fc60c")
SPAN_ID = bytes.fromhex("eee19b7ec3c1b174")
PARENT_ID = bytes.fromhex("eee19b7ec3c1b173")
T0 = 1_544_712_660_300_000_000
T1 = 1_544_712_661_300_000_000


# MARK: - Helpers


def ids_to_hex(node):
    """protobuf's JSON writes bytes as base64; OTLP/JSON writes trace and span ids as hex."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in HEX_FIELDS and isinstance(value, str):
                out[key] = base64.b64decode(value).hex()
            else:
                out[key] = ids_to_hex(value)
        return out
    if isinstance(node, list):
        return [ids_to_hex(item) for item in node]
    return node


def expected_json(message):
    as_dict = json_format.MessageToDict(
        message, preserving_proto_field_name=False, use_integers_for_enums=True
    )
    return ids_to_hex(as_dict)


def write_valid(name, signal, message=None, raw=None):
    """Writes <name>.pb and <name>.json; `raw` bytes are parsed by the official library first."""
    cls = REQUESTS[signal]
    if raw is None:
        raw = message.SerializeToString()
    parsed = cls.FromString(raw)
    assert name.startswith(signal + "-"), name
    with open(os.path.join(OUT, name + ".pb"), "wb") as f:
        f.write(raw)
    with open(os.path.join(OUT, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(expected_json(parsed), f, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
        f.write("\n")


def kv(key, value):
    return common_pb2.KeyValue(key=key, value=value)


def s(text):
    return common_pb2.AnyValue(string_value=text)


def i(number):
    return common_pb2.AnyValue(int_value=number)


def d(number):
    return common_pb2.AnyValue(double_value=number)


def b(flag):
    return common_pb2.AnyValue(bool_value=flag)


def arr(*values):
    return common_pb2.AnyValue(array_value=common_pb2.ArrayValue(values=list(values)))


def kvl(*pairs):
    return common_pb2.AnyValue(kvlist_value=common_pb2.KeyValueList(values=list(pairs)))


def resource(*attributes, dropped=0):
    return resource_pb2.Resource(attributes=list(attributes), dropped_attributes_count=dropped)


def scope(name, version="", attributes=()):
    return common_pb2.InstrumentationScope(name=name, version=version, attributes=list(attributes))


# Raw wire encoding, for cases the generated classes cannot produce (unknown fields, unpacked
# repeated fields, duplicated fields, unusual varints).


def varint(value):
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(number, wire_type):
    return varint(number << 3 | wire_type)


def f_varint(number, value):
    return tag(number, 0) + varint(value)


def f_fixed64(number, value):
    return tag(number, 1) + (value & ((1 << 64) - 1)).to_bytes(8, "little")


def f_double(number, value):
    return tag(number, 1) + struct.pack("<d", value)


def f_fixed32(number, value):
    return tag(number, 5) + (value & 0xFFFFFFFF).to_bytes(4, "little")


def f_len(number, payload):
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    return tag(number, 2) + varint(len(payload)) + payload


def unknowns(base):
    """One unknown field of each wire type, numbered from `base`."""
    return (
        f_varint(base, 150)
        + f_fixed64(base + 1, 0x0102030405060708)
        + f_len(base + 2, b"\x08\x96\x01 not a message")
        + f_fixed32(base + 3, 0xDEADBEEF)
        + f_varint((1 << 29) - 1, 1)  # the largest field number
    )


def logs_envelope(*records, resource_bytes=b""):
    scope_logs = f_len(1, f_len(1, "raw-scope")) + b"".join(f_len(2, r) for r in records)
    resource_logs = (f_len(1, resource_bytes) if resource_bytes else b"") + f_len(2, scope_logs)
    return f_len(1, resource_logs)


def metrics_envelope(*metrics):
    scope_metrics = b"".join(f_len(2, m) for m in metrics)
    return f_len(1, f_len(2, scope_metrics))


# MARK: - Valid requests built with the official classes


def logs_basic():
    records = [
        logs_pb2.LogRecord(
            time_unix_nano=T0,
            observed_time_unix_nano=T0 + 1000,
            severity_number=logs_pb2.SEVERITY_NUMBER_INFO,
            severity_text="Information",
            body=s("checkout completed"),
            attributes=[
                kv("user.id", s("u-42")),
                kv("cart.items", i(3)),
                kv("cart.total", d(129.95)),
                kv("cart.express", b(True)),
                kv("payload", common_pb2.AnyValue(bytes_value=b"\x00\x01\xfe\xffpulse")),
                kv("tags", arr(s("a"), i(-7), d(0.5), b(False))),
                kv("nested", kvl(kv("level", i(1)), kv("inner", kvl(kv("deep", s("yes")))))),
            ],
            dropped_attributes_count=2,
            flags=0x01,
            trace_id=TRACE_ID,
            span_id=SPAN_ID,
            event_name="checkout.completed",
        ),
        logs_pb2.LogRecord(
            time_unix_nano=T1,
            severity_number=logs_pb2.SEVERITY_NUMBER_ERROR,
            body=kvl(kv("message", s("payment declined")), kv("code", i(402))),
            attributes=[kv("exception.type", s("PaymentError"))],
        ),
        logs_pb2.LogRecord(
            observed_time_unix_nano=T1,
            body=common_pb2.AnyValue(bytes_value=b"\xde\xad\xbe\xef"),
            event_name="device.crash",
        ),
        logs_pb2.LogRecord(body=arr(s("x"), arr(i(1), i(2)), kvl())),
        logs_pb2.LogRecord(),
    ]
    request = logs_service_pb2.ExportLogsServiceRequest(
        resource_logs=[
            logs_pb2.ResourceLogs(
                resource=resource(
                    kv("service.name", s("checkout")),
                    kv("service.version", s("2.4.1")),
                    kv("host.cpu.count", i(8)),
                    dropped=1,
                ),
                scope_logs=[
                    logs_pb2.ScopeLogs(
                        scope=scope("io.pulse.checkout", "1.0.0", [kv("scope.attr", s("v"))]),
                        log_records=records,
                        schema_url="https://opentelemetry.io/schemas/1.26.0",
                    ),
                    logs_pb2.ScopeLogs(scope=scope("second"), log_records=[logs_pb2.LogRecord(severity_text="DEBUG")]),
                ],
                schema_url="https://opentelemetry.io/schemas/1.26.0",
            ),
            logs_pb2.ResourceLogs(
                scope_logs=[logs_pb2.ScopeLogs(log_records=[logs_pb2.LogRecord(body=s("no resource"))])]
            ),
        ]
    )
    write_valid("logs-basic", "logs", request)


def logs_values():
    """Edge values: extremes, empty values with presence, non-finite doubles, Unicode."""
    record = logs_pb2.LogRecord(
        time_unix_nano=(1 << 64) - 1,
        severity_number=24,
        body=s(""),
        attributes=[
            kv("int.max", i((1 << 63) - 1)),
            kv("int.min", i(-(1 << 63))),
            kv("int.zero", i(0)),
            kv("double.zero", d(0.0)),
            kv("double.negzero", d(-0.0)),
            kv("double.nan", d(math.nan)),
            kv("double.inf", d(math.inf)),
            kv("double.neginf", d(-math.inf)),
            kv("double.tiny", d(5e-324)),
            kv("double.huge", d(1.7976931348623157e308)),
            kv("double.fraction", d(0.1)),
            kv("bool.false", b(False)),
            kv("string.empty", s("")),
            kv("bytes.empty", common_pb2.AnyValue(bytes_value=b"")),
            kv("bytes.pad1", common_pb2.AnyValue(bytes_value=b"ab")),
            kv("bytes.pad2", common_pb2.AnyValue(bytes_value=b"a")),
            kv("unicode", s('émoji 🚀 "quoted" \\ back\nslash\t\u0001\u2028 中文')),
            kv("empty.array", common_pb2.AnyValue(array_value=common_pb2.ArrayValue())),
            kv("empty.kvlist", common_pb2.AnyValue(kvlist_value=common_pb2.KeyValueList())),
            kv("empty.value", common_pb2.AnyValue()),
            common_pb2.KeyValue(key="no.value"),
            kv("", s("empty key")),
        ],
        flags=0xFFFFFFFF,
        trace_id=b"\x00" * 16,
        span_id=b"\x01\x02\x03",
    )
    request = logs_service_pb2.ExportLogsServiceRequest(
        resource_logs=[
            logs_pb2.ResourceLogs(
                resource=resource_pb2.Resource(),
                scope_logs=[logs_pb2.ScopeLogs(scope=common_pb2.InstrumentationScope(), log_records=[record])],
            )
        ]
    )
    write_valid("logs-values", "logs", request)


def traces_basic():
    span = trace_pb2.Span(
        trace_id=TRACE_ID,
        span_id=SPAN_ID,
        trace_state="rojo=00f067aa0ba902b7",
        parent_span_id=PARENT_ID,
        flags=0x301,
        name="GET /cart",
        kind=trace_pb2.Span.SPAN_KIND_SERVER,
        start_time_unix_nano=T0,
        end_time_unix_nano=T1,
        attributes=[kv("http.method", s("GET")), kv("http.status_code", i(200))],
        dropped_attributes_count=1,
        events=[
            trace_pb2.Span.Event(
                time_unix_nano=T0 + 5, name="cache.miss", attributes=[kv("key", s("cart:42"))], dropped_attributes_count=3
            ),
            trace_pb2.Span.Event(name="empty"),
        ],
        dropped_events_count=4,
        links=[
            trace_pb2.Span.Link(
                trace_id=bytes(range(16)),
                span_id=bytes(range(8)),
                trace_state="k=v",
                attributes=[kv("link.kind", s("follows"))],
                dropped_attributes_count=5,
                flags=0x100,
            )
        ],
        dropped_links_count=6,
        status=trace_pb2.Status(code=trace_pb2.Status.STATUS_CODE_ERROR, message="upstream timeout"),
    )
    spans = [span]
    for kind in range(0, 6):
        spans.append(
            trace_pb2.Span(
                trace_id=TRACE_ID,
                span_id=bytes([kind + 1] * 8),
                name=f"kind-{kind}",
                kind=kind,
                status=trace_pb2.Status(code=trace_pb2.Status.STATUS_CODE_OK) if kind == 1 else None,
            )
        )
    spans.append(trace_pb2.Span(name="unset-status", status=trace_pb2.Status()))
    request = trace_service_pb2.ExportTraceServiceRequest(
        resource_spans=[
            trace_pb2.ResourceSpans(
                resource=resource(kv("service.name", s("cart"))),
                scope_spans=[
                    trace_pb2.ScopeSpans(scope=scope("io.pulse.http", "0.9"), spans=spans, schema_url="https://x/1")
                ],
            )
        ]
    )
    write_valid("traces-basic", "traces", request)


def number_point(value, attributes=(), time=T1, exemplars=(), flags=0):
    point = metrics_pb2.NumberDataPoint(
        attributes=list(attributes), start_time_unix_nano=T0, time_unix_nano=time, exemplars=list(exemplars), flags=flags
    )
    if isinstance(value, float):
        point.as_double = value
    elif value is not None:
        point.as_int = value
    return point


def exemplar(value):
    ex = metrics_pb2.Exemplar(
        filtered_attributes=[kv("client", s("ios"))], time_unix_nano=T0 + 7, span_id=SPAN_ID, trace_id=TRACE_ID
    )
    if isinstance(value, float):
        ex.as_double = value
    else:
        ex.as_int = value
    return ex


def metrics_request(*metrics):
    return metrics_service_pb2.ExportMetricsServiceRequest(
        resource_metrics=[
            metrics_pb2.ResourceMetrics(
                resource=resource(kv("service.name", s("metrics-svc"))),
                scope_metrics=[metrics_pb2.ScopeMetrics(scope=scope("io.pulse.metrics", "3"), metrics=list(metrics))],
                schema_url="https://opentelemetry.io/schemas/1.26.0",
            )
        ]
    )


def metrics_gauge():
    gauge = metrics_pb2.Metric(
        name="memory.used",
        description="Resident memory",
        unit="By",
        gauge=metrics_pb2.Gauge(
            data_points=[
                number_point(1024.5, [kv("pool", s("heap"))], exemplars=[exemplar(3.5), exemplar(-9)]),
                number_point(-(1 << 63)),
                number_point(0),  # as_int = 0 is present (oneof)
                number_point(0.0),
                number_point(None, flags=1),  # no value, no-recorded-value flag
            ]
        ),
        metadata=[kv("source", s("sdk"))],
    )
    write_valid("metrics-gauge", "metrics", metrics_request(gauge))


def metrics_sum():
    sums = [
        metrics_pb2.Metric(
            name="requests",
            unit="1",
            sum=metrics_pb2.Sum(
                data_points=[number_point(42, [kv("route", s("/cart"))]), number_point(7, [kv("route", s("/pay"))])],
                aggregation_temporality=metrics_pb2.AGGREGATION_TEMPORALITY_CUMULATIVE,
                is_monotonic=True,
            ),
        ),
        metrics_pb2.Metric(
            name="queue.delta",
            sum=metrics_pb2.Sum(
                data_points=[number_point(-2.25)],
                aggregation_temporality=metrics_pb2.AGGREGATION_TEMPORALITY_DELTA,
            ),
        ),
        metrics_pb2.Metric(name="empty.sum", sum=metrics_pb2.Sum()),
    ]
    write_valid("metrics-sum", "metrics", metrics_request(*sums))


def metrics_histogram():
    histogram = metrics_pb2.Metric(
        name="http.server.duration",
        unit="ms",
        histogram=metrics_pb2.Histogram(
            data_points=[
                metrics_pb2.HistogramDataPoint(
                    attributes=[kv("route", s("/cart"))],
                    start_time_unix_nano=T0,
                    time_unix_nano=T1,
                    count=10,
                    sum=123.5,
                    bucket_counts=[1, 2, 3, 4, 0],
                    explicit_bounds=[5.0, 10.0, 25.0, 50.0],
                    exemplars=[exemplar(12.5)],
                    flags=0,
                    min=0.5,
                    max=48.0,
                ),
                # sum, min and max have presence: 0 is written.
                metrics_pb2.HistogramDataPoint(count=0, sum=0.0, min=0.0, max=0.0, bucket_counts=[0], flags=1),
                metrics_pb2.HistogramDataPoint(count=(1 << 64) - 1, bucket_counts=[(1 << 64) - 1]),
            ],
            aggregation_temporality=metrics_pb2.AGGREGATION_TEMPORALITY_DELTA,
        ),
    )
    write_valid("metrics-histogram", "metrics", metrics_request(histogram))


def metrics_exponential_histogram():
    metric = metrics_pb2.Metric(
        name="latency.exp",
        unit="s",
        exponential_histogram=metrics_pb2.ExponentialHistogram(
            data_points=[
                metrics_pb2.ExponentialHistogramDataPoint(
                    attributes=[kv("region", s("eu"))],
                    start_time_unix_nano=T0,
                    time_unix_nano=T1,
                    count=17,
                    sum=3.25,
                    scale=-3,
                    zero_count=2,
                    positive=metrics_pb2.ExponentialHistogramDataPoint.Buckets(offset=-5, bucket_counts=[1, 0, 300, 4]),
                    negative=metrics_pb2.ExponentialHistogramDataPoint.Buckets(offset=7, bucket_counts=[2]),
                    flags=0,
                    exemplars=[exemplar(7)],
                    min=-1.5,
                    max=9.75,
                    zero_threshold=1e-9,
                ),
                metrics_pb2.ExponentialHistogramDataPoint(
                    scale=20,
                    positive=metrics_pb2.ExponentialHistogramDataPoint.Buckets(),
                    negative=metrics_pb2.ExponentialHistogramDataPoint.Buckets(offset=-(1 << 31)),
                ),
            ],
            aggregation_temporality=metrics_pb2.AGGREGATION_TEMPORALITY_CUMULATIVE,
        ),
    )
    write_valid("metrics-exponential-histogram", "metrics", metrics_request(metric))


def metrics_summary():
    metric = metrics_pb2.Metric(
        name="gc.pause",
        unit="ms",
        summary=metrics_pb2.Summary(
            data_points=[
                metrics_pb2.SummaryDataPoint(
                    attributes=[kv("gen", i(2))],
                    start_time_unix_nano=T0,
                    time_unix_nano=T1,
                    count=100,
                    sum=512.5,
                    quantile_values=[
                        metrics_pb2.SummaryDataPoint.ValueAtQuantile(quantile=0.0, value=0.25),
                        metrics_pb2.SummaryDataPoint.ValueAtQuantile(quantile=0.5, value=4.0),
                        metrics_pb2.SummaryDataPoint.ValueAtQuantile(quantile=0.99, value=30.5),
                        metrics_pb2.SummaryDataPoint.ValueAtQuantile(quantile=1.0, value=0.0),
                    ],
                    flags=0,
                ),
                metrics_pb2.SummaryDataPoint(),
            ]
        ),
    )
    write_valid("metrics-summary", "metrics", metrics_request(metric))


def metrics_all_types():
    """The five types side by side in one request, plus a metric with no data."""
    request = metrics_request(
        metrics_pb2.Metric(name="g", gauge=metrics_pb2.Gauge(data_points=[number_point(1.5)])),
        metrics_pb2.Metric(
            name="s", sum=metrics_pb2.Sum(data_points=[number_point(3)], aggregation_temporality=2, is_monotonic=True)
        ),
        metrics_pb2.Metric(
            name="h",
            histogram=metrics_pb2.Histogram(
                data_points=[metrics_pb2.HistogramDataPoint(count=1, bucket_counts=[1], explicit_bounds=[])],
                aggregation_temporality=1,
            ),
        ),
        metrics_pb2.Metric(
            name="e",
            exponential_histogram=metrics_pb2.ExponentialHistogram(
                data_points=[metrics_pb2.ExponentialHistogramDataPoint(count=1, zero_count=1)]
            ),
        ),
        metrics_pb2.Metric(
            name="q", summary=metrics_pb2.Summary(data_points=[metrics_pb2.SummaryDataPoint(count=1, sum=1.0)])
        ),
        metrics_pb2.Metric(name="nodata", description="no data field set"),
    )
    write_valid("metrics-all-types", "metrics", request)


# MARK: - Valid requests assembled on the wire


def logs_unknown_fields():
    """Unknown fields of every wire type at every level, and known numbers with the wrong wire type."""
    any_value = f_len(1, "kept") + unknowns(100)
    key_value = f_len(1, "k") + unknowns(200) + f_len(2, any_value)
    record = (
        unknowns(300)
        + f_fixed64(1, T0)
        + f_varint(1, 99)  # time_unix_nano as a varint: wrong wire type, skipped
        + f_len(3, "WARN")
        + f_fixed64(3, 5)  # severity_text as fixed64: skipped
        + f_len(6, key_value)
        + f_varint(4, 1)  # reserved field 4: unknown
        + f_fixed32(2, 9)  # severity_number as fixed32: skipped
        + f_varint(2, 13)
        + f_len(5, unknowns(400) + f_varint(3, 5))
        + f_varint(12, 1)  # event_name as a varint: skipped
    )
    resource = unknowns(500) + f_len(1, f_len(1, "service.name") + f_len(2, f_len(1, "svc")))
    raw = unknowns(600) + logs_envelope(record, resource_bytes=resource) + unknowns(700)
    write_valid("logs-unknown-fields", "logs", raw=raw)


def logs_merge_semantics():
    """Duplicated fields: last scalar wins, messages merge, repeated fields concatenate, oneofs."""
    record = (
        f_len(3, "first")
        + f_len(3, "second")  # singular string: last wins
        + f_varint(2, 9)
        + f_varint(2, 0)  # back to the default: omitted
        + f_len(6, f_len(1, "a") + f_len(2, f_varint(3, 1)))
        + f_len(5, f_len(1, "body-string") + f_varint(3, 5))  # oneof: intValue wins
        + f_len(6, f_len(1, "b") + f_len(2, f_len(5, f_len(1, f_len(1, "x")))))
        + f_len(5, f_len(5, f_len(1, f_len(1, "after"))))  # merged into body: arrayValue now wins
        + f_len(6, f_len(1, "c") + f_len(2, f_len(5, f_len(1, f_varint(2, 1)))) + f_len(2, f_len(5, f_len(1, f_varint(2, 0)))))
        + f_len(6, f_len(1, "d") + f_len(2, f_len(5, f_len(1, f_len(1, "dropped"))) + f_len(1, "s") + f_len(5, f_len(1, f_len(1, "kept")))))
        + f_len(6, f_len(1, "e") + f_len(2, f_len(1, "str") + f_varint(2, 1)))  # bool wins over string
        + f_fixed32(8, 1)
        + f_fixed32(8, 0x300)
    )
    resource_a = f_len(1, f_len(1, "one") + f_len(2, f_len(1, "1"))) + f_varint(2, 4)
    resource_b = f_len(1, f_len(1, "two") + f_len(2, f_len(1, "2")))
    resource_logs = f_len(1, resource_a) + f_len(2, f_len(2, record)) + f_len(1, resource_b) + f_len(3, "schema")
    write_valid("logs-merge-semantics", "logs", raw=f_len(1, resource_logs))


def logs_varints():
    """Unusual but valid varints: padded encodings, ten-byte negatives, truncation to 32 bits."""
    padded_one = b"\x81\x80\x80\x80\x80\x80\x80\x80\x80\x00"  # 1 in ten bytes
    record = (
        tag(2, 0) + varint(-1)  # severity_number (enum, int32) -1 in ten bytes
        + tag(7, 0) + varint((1 << 32) + 5)  # uint32 dropped count keeps the low 32 bits
        + f_len(6, f_len(1, "padded") + f_len(2, tag(3, 0) + padded_one))
        + f_len(6, f_len(1, "bool2") + f_len(2, f_varint(2, 2)))  # bool from 2 is true
        + f_len(6, f_len(1, "max") + f_len(2, tag(3, 0) + b"\xff" * 9 + b"\x01"))  # int64 -1
        + f_len(6, f_len(1, "strindex") + f_len(2, f_varint(8, 7)) + f_varint(3, 3))
    )
    write_valid("logs-varints", "logs", raw=logs_envelope(record))


def metrics_packed_unpacked():
    """Repeated numeric fields packed, unpacked, and both mixed in one field."""
    hist_point = (
        f_fixed64(4, 6)
        + f_fixed64(6, 1)  # bucket_counts unpacked
        + f_fixed64(6, 2)
        + f_len(6, (3).to_bytes(8, "little") + (0).to_bytes(8, "little"))  # then a packed run
        + f_double(7, 1.0)  # explicit_bounds unpacked
        + f_len(7, b"")  # an empty packed run
        + f_double(7, 2.5)
        + f_len(7, struct.pack("<dd", 10.0, -0.0))
    )
    histogram = f_len(9, f_len(1, hist_point) + f_varint(2, 2))
    buckets = f_varint(1, 9) + f_varint(2, 5) + f_len(2, varint(0) + varint(300) + varint((1 << 64) - 1)) + f_varint(2, 1)
    exp_point = f_varint(6, 1) + f_len(8, buckets) + f_len(9, f_len(2, varint(4) + varint(5)))  # sint32 scale 1 -> -1
    exp_histogram = f_len(10, f_len(1, exp_point))
    entity = f_len(1, "schema") + f_len(2, "service") + f_len(3, "service.name") + f_len(3, "service.namespace") + f_len(4, "d")
    resource = f_len(3, entity)
    raw = f_len(1, f_len(1, resource) + f_len(2, f_len(2, f_len(1, "hist") + histogram) + f_len(2, f_len(1, "exp") + exp_histogram)))
    write_valid("metrics-packed-unpacked", "metrics", raw=raw)


def metrics_oneof_switch():
    """Metric.data switching member: the last member wins, earlier runs are dropped."""
    metric = (
        f_len(1, "switch")
        + f_len(5, f_len(1, f_double(4, 1.0)))
        + f_len(7, f_len(1, f_varint(6, 0) + f_fixed64(6, 3)) + f_varint(3, 1))  # as_int as a varint: skipped
        + f_len(7, f_varint(2, 2))  # merged into the sum
        + f_len(1, "renamed")
    )
    point_switch = f_double(4, 2.5) + f_fixed64(6, 11)  # NumberDataPoint: asInt wins
    metric2 = f_len(1, "point-switch") + f_len(5, f_len(1, point_switch))
    write_valid("metrics-oneof-switch", "metrics", raw=metrics_envelope(metric, metric2))


def traces_empty_and_defaults():
    """Empty messages inside repeated fields and explicit default values."""
    span = f_len(1, b"") + f_len(5, "") + f_varint(6, 0) + f_fixed64(7, 0) + f_len(11, b"") + f_len(13, b"") + f_len(15, b"")
    raw = f_len(1, b"") + f_len(1, f_len(2, b"") + f_len(2, f_len(2, span) + f_len(2, b"")))
    write_valid("traces-empty-and-defaults", "traces", raw=raw)


def empty_requests():
    for signal in REQUESTS:
        write_valid(f"{signal}-empty", signal, raw=b"")


# MARK: - Invalid requests


INVALID = []


def invalid(name, signal, raw, code, path, python_rejects=True):
    cls = REQUESTS[signal]
    try:
        cls.FromString(raw)
        rejected = False
    except DecodeError:
        rejected = True
    if rejected != python_rejects:
        sys.exit(f"{name}: the official parser {'rejects' if rejected else 'accepts'} it, expected otherwise")
    with open(os.path.join(OUT, f"invalid-{name}.pb"), "wb") as f:
        f.write(raw)
    INVALID.append(
        {"file": f"invalid-{name}.pb", "signal": signal, "code": code, "path": path, "officialParserRejects": rejected}
    )


def deep_any_value(levels):
    value = f_len(1, "bottom")
    for _ in range(levels):
        value = f_len(5, f_len(1, value))
    return value


def invalid_requests():
    good_record = f_len(3, "ok")
    truncated_body = f_varint(2, 9) + tag(5, 2) + varint(40) + f_len(1, "short")
    scope_a = f_len(2, good_record)
    scope_b = f_len(2, good_record) * 3 + f_len(2, truncated_body)
    raw = f_len(1, f_len(2, scope_a) + f_len(2, scope_b))
    invalid("truncated-body", "logs", raw, "truncated", "resourceLogs[0].scopeLogs[1].logRecords[3].body")

    invalid("truncated-tag", "logs", b"\x0a\x00\x8a", "truncated", "")
    invalid("truncated-length", "traces", tag(1, 2) + b"\x80", "truncated", "resourceSpans[0]")
    invalid("truncated-fixed64", "logs", logs_envelope(tag(1, 1) + b"\x01\x02\x03"), "truncated",
            "resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano")
    invalid("truncated-fixed32", "traces", f_len(1, f_len(2, f_len(2, tag(16, 5) + b"\x01")))
            , "truncated", "resourceSpans[0].scopeSpans[0].spans[0].flags")
    invalid("varint-too-long", "logs", f_len(1, f_len(3, b"") + tag(99, 0) + b"\x80" * 10 + b"\x00"),
            "varintOverflow", "resourceLogs[0].#99")
    # upb drops the bits beyond 64; a value that does not fit is rejected here.
    invalid("varint-overflow", "metrics", tag(5, 0) + b"\xff" * 9 + b"\x02", "varintOverflow", "#5", python_rejects=False)
    invalid("wire-type-6", "logs", f_len(1, tag(2, 6) + b"\x00"), "invalidWireType", "resourceLogs[0]")
    invalid("wire-type-7", "metrics", tag(1, 7), "invalidWireType", "")
    invalid("group", "traces", f_len(1, tag(50, 3) + f_varint(1, 1) + tag(50, 4)), "groupNotSupported",
            "resourceSpans[0]", python_rejects=False)
    invalid("end-group", "traces", tag(50, 4), "groupNotSupported", "", python_rejects=True)
    invalid("field-number-zero", "logs", f_len(1, f_varint(0, 1)), "invalidFieldNumber", "resourceLogs[0]")
    invalid("invalid-utf8", "logs", logs_envelope(f_len(3, b"bad \xc3\x28 text")), "invalidUTF8",
            "resourceLogs[0].scopeLogs[0].logRecords[0].severityText")
    invalid("invalid-utf8-attribute", "traces",
            f_len(1, f_len(2, f_len(2, f_len(9, f_len(1, "k") + f_len(2, f_len(1, b"\xed\xa0\x80")))))),
            "invalidUTF8", "resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value.stringValue")
    invalid("invalid-utf8-losing-oneof", "logs",
            logs_envelope(f_len(5, f_len(1, b"\xff") + f_varint(3, 1))), "invalidUTF8",
            "resourceLogs[0].scopeLogs[0].logRecords[0].body.stringValue")
    invalid("packed-fixed64-remainder", "metrics",
            metrics_envelope(f_len(9, f_len(1, f_len(6, b"\x01" * 12)))), "truncated",
            "resourceMetrics[0].scopeMetrics[0].metrics[0].histogram.dataPoints[0].bucketCounts[1]")
    invalid("packed-varint-truncated", "metrics",
            metrics_envelope(f_len(10, f_len(1, f_len(8, f_len(2, b"\x01\x80"))))), "truncated",
            "resourceMetrics[0].scopeMetrics[0].metrics[0].exponentialHistogram.dataPoints[0].positive.bucketCounts[1]")
    deep = logs_envelope(f_len(5, deep_any_value(40)))
    invalid("deep-nesting", "logs", deep, "nestingTooDeep",
            "resourceLogs[0].scopeLogs[0].logRecords[0].body" + ".arrayValue.values[0]" * 14,
            python_rejects=False)


# MARK: - Responses


def status_class():
    """google.rpc.Status, declared here from its public definition (code = 1, message = 2)."""
    file_proto = descriptor_pb2.FileDescriptorProto(name="pulsegate_fixture_status.proto", package="google.rpc", syntax="proto3")
    message = file_proto.message_type.add(name="Status")
    message.field.add(name="code", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    message.field.add(name="message", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("google.rpc.Status"))


def responses():
    cases = []
    kinds = {
        "logs": (logs_service_pb2.ExportLogsServiceResponse, logs_service_pb2.ExportLogsPartialSuccess, "rejected_log_records"),
        "traces": (trace_service_pb2.ExportTraceServiceResponse, trace_service_pb2.ExportTracePartialSuccess, "rejected_spans"),
        "metrics": (
            metrics_service_pb2.ExportMetricsServiceResponse,
            metrics_service_pb2.ExportMetricsPartialSuccess,
            "rejected_data_points",
        ),
    }
    examples = [(0, ""), (3, "3 log records were over the attribute limit"), (0, "warning only"), (1 << 40, ""),
                (-1, "negative"), (300, "ünïcode")]
    for signal, (response_cls, partial_cls, field) in kinds.items():
        for rejected, message in examples:
            response = response_cls()
            if rejected or message:
                response.partial_success.CopyFrom(partial_cls(**{field: rejected, "error_message": message}))
            cases.append({"kind": "response", "signal": signal, "rejected": str(rejected), "errorMessage": message,
                          "hex": response.SerializeToString().hex()})
    status = status_class()
    for code, message in [(0, ""), (3, "invalid protobuf: resourceLogs[0]: truncated varint"), (14, "overloaded"),
                          (-5, "negative code"), (8, "")]:
        cases.append({"kind": "status", "code": code, "message": message,
                      "hex": status(code=code, message=message).SerializeToString().hex()})
    with open(os.path.join(OUT, "responses.json"), "w", encoding="utf-8") as f:
        json.dump(cases, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if name.endswith((".pb", ".json")):
            os.remove(os.path.join(OUT, name))
    logs_basic()
    logs_values()
    traces_basic()
    metrics_gauge()
    metrics_sum()
    metrics_histogram()
    metrics_exponential_histogram()
    metrics_summary()
    metrics_all_types()
    logs_unknown_fields()
    logs_merge_semantics()
    logs_varints()
    metrics_packed_unpacked()
    metrics_oneof_switch()
    traces_empty_and_defaults()
    empty_requests()
    invalid_requests()
    with open(os.path.join(OUT, "invalid.json"), "w", encoding="utf-8") as f:
        json.dump(INVALID, f, indent=2)
        f.write("\n")
    responses()
    print(f"wrote {len(os.listdir(OUT))} files to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
