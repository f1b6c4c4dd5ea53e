import OTLPProtobuf
import PulseJSON

/// The type checks of the one mapping walk: ``OTLPValidator``'s rules applied to each object as
/// ``ResourceMapper`` reads it, with the members the mapper goes on to read itself deferred (only
/// checked for being an object or an array, their content checked when the mapper reaches it).
/// Everything else in the object is checked as the walk passes it.
enum MappingWalk {
    /// Checks the members of `object` (an object) by the rules of `kind`.
    @inline(__always)
    static func check(members object: JSONCursor, _ kind: MessageKind, deferring deferred: UInt64 = 0)
        throws(MappingProblem)
    {
        do {
            try OTLPValidator.check(members: object, kind, deferring: deferred)
        } catch {
            throw .invalid(error)
        }
    }

    /// Checks an element of a deferred repeated message field: an object, whose members the
    /// caller checks next.
    @inline(__always)
    static func check(element item: JSONCursor) throws(MappingProblem) {
        do {
            try OTLPValidator.check(element: item)
        } catch {
            throw .invalid(error)
        }
    }

    /// Checks everything in a deferred message the mapper does not read after all (`nil` and
    /// `null` are absent).
    static func check(skipped value: JSONCursor?, _ kind: MessageKind) throws(MappingProblem) {
        guard let value, !value.isNull else { return }
        do {
            try OTLPValidator.check(message: value, kind)
        } catch {
            throw .invalid(error)
        }
    }

    /// Checks one non-null scalar member the writer is about to read (`field` of `kind`).
    @inline(__always)
    static func check(_ value: JSONCursor, field: Int, of kind: MessageKind) throws(MappingProblem) {
        do {
            try OTLPValidator.check(value, OTLPValidator.schemas[kind.rawValue].forms[field])
        } catch {
            throw .invalid(error)
        }
    }

    // MARK: - Deferred members

    private static func mask(_ kind: MessageKind, _ names: String...) -> UInt64 {
        names.reduce(0) { $0 | OTLPValidator.schemas[kind.rawValue].mask($1) }
    }

    /// What the walk reads of each message itself, by message kind.
    static let deferred: [UInt64] = {
        var masks = [UInt64](repeating: 0, count: MessageKind.allCases.count)
        masks[MessageKind.exportLogsServiceRequest.rawValue] = mask(.exportLogsServiceRequest, "resourceLogs")
        masks[MessageKind.exportTraceServiceRequest.rawValue] = mask(.exportTraceServiceRequest, "resourceSpans")
        masks[MessageKind.exportMetricsServiceRequest.rawValue] = mask(
            .exportMetricsServiceRequest, "resourceMetrics")
        masks[MessageKind.resourceLogs.rawValue] = mask(.resourceLogs, "scopeLogs")
        masks[MessageKind.resourceSpans.rawValue] = mask(.resourceSpans, "scopeSpans")
        masks[MessageKind.resourceMetrics.rawValue] = mask(.resourceMetrics, "scopeMetrics")
        masks[MessageKind.scopeLogs.rawValue] = mask(.scopeLogs, "logRecords")
        masks[MessageKind.scopeSpans.rawValue] = mask(.scopeSpans, "spans")
        masks[MessageKind.scopeMetrics.rawValue] = mask(.scopeMetrics, "metrics")
        masks[MessageKind.logRecord.rawValue] = mask(.logRecord, "attributes", "body")
        masks[MessageKind.span.rawValue] = mask(.span, "attributes")
        masks[MessageKind.metric.rawValue] = mask(
            .metric, "gauge", "sum", "histogram", "exponentialHistogram", "summary")
        for kind in [MessageKind.gauge, .sum, .histogram, .exponentialHistogram, .summary] {
            masks[kind.rawValue] = mask(kind, "dataPoints")
        }
        for kind in [
            MessageKind.numberDataPoint, .histogramDataPoint, .exponentialHistogramDataPoint, .summaryDataPoint,
        ] {
            masks[kind.rawValue] = mask(kind, "attributes")
        }
        masks[MessageKind.keyValue.rawValue] = mask(.keyValue, "value")
        masks[MessageKind.arrayValue.rawValue] = mask(.arrayValue, "values")
        masks[MessageKind.keyValueList.rawValue] = mask(.keyValueList, "values")
        return masks
    }()

    /// The scalar fields the walk checks as it reads them (``read(_:field:of:_:)``), by message
    /// kind: the log record's time and severity, which the mapping reads anyway.
    static let folded: [UInt64] = {
        var masks = [UInt64](repeating: 0, count: MessageKind.allCases.count)
        masks[MessageKind.logRecord.rawValue] = mask(.logRecord, "timeUnixNano", "severityNumber")
        return masks
    }()

    /// Reads the member `value` of the folded field `field` of `kind` (``folded``; `nil` and `null`
    /// are absent) with `read`, which returns `nil` exactly when the value fails the field's check.
    @inline(__always)
    static func read<Value>(
        _ value: JSONCursor?, field: Int, of kind: MessageKind, _ read: (JSONCursor) -> Value?
    ) throws(MappingProblem) -> Value? {
        guard let value, !value.isNull else { return nil }
        guard let result = read(value) else {
            throw .invalid(OTLPValidator.Failure(OTLPValidator.schemas[kind.rawValue].forms[field].expectation))
        }
        return result
    }

    /// Checks the members of `object` by the rules of `kind`, deferring what the walk reads itself.
    @inline(__always)
    static func enter(_ object: JSONCursor, _ kind: MessageKind) throws(MappingProblem) {
        try check(members: object, kind, deferring: deferred[kind.rawValue])
    }

    /// Enters `object` (``enter(_:_:)``) and returns its known members by field
    /// (``MessageFields``), found in the same pass; the caller reads the ``folded`` fields with
    /// ``read(_:field:of:_:)``.
    @inline(__always)
    static func fields(of object: JSONCursor, _ kind: MessageKind) throws(MappingProblem) -> MessageFields {
        try fields(
            of: object, OTLPValidator.schemas[kind.rawValue], deferring: deferred[kind.rawValue],
            folding: folded[kind.rawValue])
    }

    /// ``fields(of:_:)`` with the kind's schema and masks given.
    @inline(__always)
    private static func fields(
        of object: JSONCursor, _ schema: OTLPValidator.Schema, deferring deferred: UInt64, folding folded: UInt64
    ) throws(MappingProblem) -> MessageFields {
        var fields = MessageFields(of: object)
        do {
            try OTLPValidator.check(members: object, schema, deferring: deferred, folding: folded) {
                fields.note($0, $1)
            }
        } catch {
            throw .invalid(error)
        }
        return fields
    }

    /// What ``keyValue(_:)`` reads for every attribute, looked up once: the `KeyValue` schema, its
    /// deferred fields and its fields' indices.
    private static let keyValueRules = (
        schema: OTLPValidator.schemas[MessageKind.keyValue.rawValue],
        deferred: deferred[MessageKind.keyValue.rawValue],
        key: OTLPValidator.schemas[MessageKind.keyValue.rawValue].field(named: "key"),
        value: OTLPValidator.schemas[MessageKind.keyValue.rawValue].field(named: "value")
    )

    /// Checks an element of a deferred repeated `KeyValue` field, enters it and returns its `key`
    /// and `value` members (`null` included), found in the same pass.
    @inline(__always)
    static func keyValue(_ item: JSONCursor) throws(MappingProblem) -> (key: JSONCursor?, value: JSONCursor?) {
        try check(element: item)
        let rules = keyValueRules
        let members = try fields(of: item, rules.schema, deferring: rules.deferred, folding: 0)
        return (members[rules.key], members[rules.value])
    }

    /// Checks an element of a deferred repeated field and enters it.
    @inline(__always)
    static func enter(element item: JSONCursor, _ kind: MessageKind) throws(MappingProblem) {
        try check(element: item)
        try enter(item, kind)
    }

    /// The kinds of a signal's resource, scope and record messages.
    static func kinds(_ signal: OTLPSignal) -> (resource: MessageKind, scope: MessageKind, record: MessageKind) {
        switch signal {
        case .logs: (.resourceLogs, .scopeLogs, .logRecord)
        case .traces: (.resourceSpans, .scopeSpans, .span)
        case .metrics: (.resourceMetrics, .scopeMetrics, .metric)
        }
    }
}
