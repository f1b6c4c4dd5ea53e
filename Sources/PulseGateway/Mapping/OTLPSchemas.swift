extension OTLPValidator {
    /// The OTLP messages (opentelemetry-proto v1) as JSON field forms: every field of
    /// `openapi/pulsegate.yaml`'s request schemas, with proto3 JSON names.
    enum Schemas {
        typealias Form = OTLPValidator.Form

        static let attributes = Form.repeated(.keyValue)

        static let anyValue = Schema([
            "stringValue": .string, "boolValue": .bool, "intValue": .int64, "doubleValue": .double,
            "arrayValue": .message(Schema(["values": .repeated(.anyValue)])),
            "kvlistValue": .message(Schema(["values": attributes])), "bytesValue": .bytes,
        ])

        static let keyValue = Schema(["key": .string, "value": .anyValue])

        static let resource = Form.message(
            Schema(["attributes": attributes, "droppedAttributesCount": .uint32]))

        static let scope = Form.message(
            Schema([
                "name": .string, "version": .string, "attributes": attributes, "droppedAttributesCount": .uint32,
            ]))

        /// `SeverityNumber` names, index = value.
        static let severityNames: [String] = {
            var names = ["SEVERITY_NUMBER_UNSPECIFIED"]
            for level in ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"] {
                for step in ["", "2", "3", "4"] { names.append("SEVERITY_NUMBER_" + level + step) }
            }
            return names
        }()

        static let spanKindNames = [
            "SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT",
            "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER",
        ]

        static let statusCodeNames = ["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"]

        static let temporalityNames = [
            "AGGREGATION_TEMPORALITY_UNSPECIFIED", "AGGREGATION_TEMPORALITY_DELTA",
            "AGGREGATION_TEMPORALITY_CUMULATIVE",
        ]

        /// The request of a signal: its resources, their scopes, their records.
        private static func request(resources: String, scopes: String, records: String, record: Form) -> Schema {
            let scopeEntry = Form.message(Schema(["scope": scope, records: .repeated(record), "schemaUrl": .string]))
            let resourceEntry = Form.message(
                Schema(["resource": resource, scopes: .repeated(scopeEntry), "schemaUrl": .string]))
            return Schema([resources: .repeated(resourceEntry)])
        }

        // MARK: Logs

        static let logRecord = Form.message(
            Schema([
                "timeUnixNano": .uint64, "observedTimeUnixNano": .uint64,
                "severityNumber": .enumeration(severityNames), "severityText": .string, "body": .anyValue,
                "attributes": attributes, "droppedAttributesCount": .uint32, "flags": .uint32,
                "traceId": .hexID(32), "spanId": .hexID(16), "eventName": .string,
            ]))

        static let logsRequest = request(
            resources: "resourceLogs", scopes: "scopeLogs", records: "logRecords", record: logRecord)

        // MARK: Traces

        static let span = Form.message(
            Schema([
                "traceId": .hexID(32), "spanId": .hexID(16), "traceState": .string, "parentSpanId": .hexID(16),
                "flags": .uint32, "name": .string, "kind": .enumeration(spanKindNames),
                "startTimeUnixNano": .uint64, "endTimeUnixNano": .uint64, "attributes": attributes,
                "droppedAttributesCount": .uint32,
                "events": .repeated(
                    .message(
                        Schema([
                            "timeUnixNano": .uint64, "name": .string, "attributes": attributes,
                            "droppedAttributesCount": .uint32,
                        ]))),
                "droppedEventsCount": .uint32,
                "links": .repeated(
                    .message(
                        Schema([
                            "traceId": .hexID(32), "spanId": .hexID(16), "traceState": .string,
                            "attributes": attributes, "droppedAttributesCount": .uint32, "flags": .uint32,
                        ]))),
                "droppedLinksCount": .uint32,
                "status": .message(Schema(["message": .string, "code": .enumeration(statusCodeNames)])),
            ]))

        static let tracesRequest = request(
            resources: "resourceSpans", scopes: "scopeSpans", records: "spans", record: span)

        // MARK: Metrics

        static let exemplars = Form.repeated(
            .message(
                Schema([
                    "filteredAttributes": attributes, "timeUnixNano": .uint64, "asDouble": .double,
                    "asInt": .int64, "spanId": .hexID(16), "traceId": .hexID(32),
                ])))

        static let numberPoint = Form.message(
            Schema([
                "attributes": attributes, "startTimeUnixNano": .uint64, "timeUnixNano": .uint64,
                "asDouble": .double, "asInt": .int64, "exemplars": exemplars, "flags": .uint32,
            ]))

        static let histogramPoint = Form.message(
            Schema([
                "attributes": attributes, "startTimeUnixNano": .uint64, "timeUnixNano": .uint64,
                "count": .uint64, "sum": .double, "bucketCounts": .repeated(.uint64),
                "explicitBounds": .repeated(.double), "exemplars": exemplars, "flags": .uint32, "min": .double,
                "max": .double,
            ]))

        static let buckets = Form.message(Schema(["offset": .int32, "bucketCounts": .repeated(.uint64)]))

        static let exponentialHistogramPoint = Form.message(
            Schema([
                "attributes": attributes, "startTimeUnixNano": .uint64, "timeUnixNano": .uint64,
                "count": .uint64, "sum": .double, "scale": .int32, "zeroCount": .uint64, "positive": buckets,
                "negative": buckets, "flags": .uint32, "exemplars": exemplars, "min": .double, "max": .double,
                "zeroThreshold": .double,
            ]))

        static let summaryPoint = Form.message(
            Schema([
                "attributes": attributes, "startTimeUnixNano": .uint64, "timeUnixNano": .uint64,
                "count": .uint64, "sum": .double,
                "quantileValues": .repeated(.message(Schema(["quantile": .double, "value": .double]))),
                "flags": .uint32,
            ]))

        static let temporality = Form.enumeration(temporalityNames)

        static let metric = Form.message(
            Schema([
                "name": .string, "description": .string, "unit": .string, "metadata": attributes,
                "gauge": .message(Schema(["dataPoints": .repeated(numberPoint)])),
                "sum": .message(
                    Schema([
                        "dataPoints": .repeated(numberPoint), "aggregationTemporality": temporality,
                        "isMonotonic": .bool,
                    ])),
                "histogram": .message(
                    Schema(["dataPoints": .repeated(histogramPoint), "aggregationTemporality": temporality])),
                "exponentialHistogram": .message(
                    Schema([
                        "dataPoints": .repeated(exponentialHistogramPoint), "aggregationTemporality": temporality,
                    ])),
                "summary": .message(Schema(["dataPoints": .repeated(summaryPoint)])),
            ]))

        static let metricsRequest = request(
            resources: "resourceMetrics", scopes: "scopeMetrics", records: "metrics", record: metric)
    }
}
