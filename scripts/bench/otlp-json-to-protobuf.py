#!/usr/bin/env python3
"""Turns an OTLP/JSON export request into the same request in OTLP/protobuf, with the official
OpenTelemetry classes, so benchmarks post the same data in both media types.

Usage: otlp-json-to-protobuf.py logs|traces|metrics IN.json OUT.pb

OTLP/JSON differs from proto3 JSON in one place: traceId, spanId and parentSpanId are lowercase
hex, not base64; they are converted before parsing.
"""

import base64
import json
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

REQUESTS = {
    "logs": logs_service_pb2.ExportLogsServiceRequest,
    "traces": trace_service_pb2.ExportTraceServiceRequest,
    "metrics": metrics_service_pb2.ExportMetricsServiceRequest,
}
HEX_FIELDS = {"traceId", "spanId", "parentSpanId"}


def hex_to_base64(node):
    if isinstance(node, dict):
        return {
            key: (base64.b64encode(bytes.fromhex(value)).decode() if key in HEX_FIELDS and isinstance(value, str)
                  else hex_to_base64(value))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [hex_to_base64(item) for item in node]
    return node


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in REQUESTS:
        sys.exit("usage: otlp-json-to-protobuf.py logs|traces|metrics IN.json OUT.pb")
    with open(sys.argv[2], "rb") as source:
        document = hex_to_base64(json.load(source))
    message = json_format.ParseDict(document, REQUESTS[sys.argv[1]]())
    with open(sys.argv[3], "wb") as out:
        out.write(message.SerializeToString())


if __name__ == "__main__":
    main()
