import PulseJSON
import PulseKit

/// Decodes the JSON-lines input of `pulsegate upload enqueue`: one JSON object per line, one record per
/// object. `docs/uploader.md` lists every field.
///
/// ```swift
/// let decoder = RecordLineDecoder()
/// let record = try decoder.decode(Array(#"{"type":"event","name":"launch"}"#.utf8), lineNumber: 1)
/// ```
///
/// Decoding is strict: an unknown `type`, an unknown field, a missing required field or a value of the
/// wrong type rejects the line with an ``UploaderError/Code/invalidRecord`` error naming the line and the
/// field. Nothing of a rejected line is queued.
package final class RecordLineDecoder {
    private let parser = JSONParser(maxDepth: 32, maxBytes: 8 << 20)

    /// Creates a decoder.
    package init() {}

    /// The record types, by their `type` value.
    package static let types = [
        "event", "log", "crash", "span", "metric", "exit", "session_summary", "attachment",
    ]

    private static let commonFields: Set<String> = ["type", "timestamp", "attributes", "sessionId"]
    private static let fields: [String: Set<String>] = [
        "event": ["name"],
        "log": ["body", "severity"],
        "crash": ["crashId", "message", "stack", "exceptionType"],
        "span": [
            "name", "traceId", "spanId", "parentSpanId", "kind", "start", "end", "status", "statusMessage",
        ],
        "metric": ["name", "value", "kind", "monotonic", "temporality", "unit", "start"],
        "exit": ["reason", "code"],
        "session_summary": ["durationMs"],
        "attachment": ["path", "name", "contentType", "crashId"],
    ]

    /// Decodes one line (without its line terminator).
    ///
    /// - Throws: ``UploaderError/Code/invalidRecord`` with a message starting `line <n>:`.
    package func decode(_ line: [UInt8], lineNumber: Int) throws(UploaderError) -> TelemetryRecord {
        do {
            return try decodeObject(line)
        } catch let failure as LineFailure {
            throw UploaderError(.invalidRecord, "line \(lineNumber): \(failure.message)")
        } catch {
            throw UploaderError(.invalidRecord, "line \(lineNumber): not valid JSON", underlying: error)
        }
    }

    private struct LineFailure: Error {
        var message: String
    }

    private func fail(_ message: String) -> LineFailure {
        LineFailure(message: message)
    }

    private func decodeObject(_ line: [UInt8]) throws -> TelemetryRecord {
        let document = try parser.parse(line)
        let root = document.root
        guard root.kind == .object else { throw fail("expected a JSON object") }
        guard let type = root["type"]?.string else { throw fail("missing string field `type`") }
        guard let allowed = RecordLineDecoder.fields[type] else {
            throw fail(
                "unknown type `\(clip(type))` (expected one of \(RecordLineDecoder.types.joined(separator: ", ")))")
        }
        var seen: Set<String> = []
        for (key, _) in root.members {
            guard RecordLineDecoder.commonFields.contains(key) || allowed.contains(key) else {
                throw fail("unknown field `\(clip(key))` for type `\(type)`")
            }
            guard seen.insert(key).inserted else { throw fail("duplicate field `\(clip(key))`") }
        }
        let time = try timestamp(root["timestamp"], "timestamp")
        let attributes = try attributeMap(root["attributes"])
        let sessionId = try optionalString(root, "sessionId")
        switch type {
        case "event":
            return .event(
                EventEntry(
                    name: try requiredString(root, "name"), attributes: attributes, timeUnixNano: time,
                    sessionId: sessionId))
        case "log":
            return .log(
                LogEntry(
                    body: try requiredString(root, "body"), severity: try severity(root["severity"]),
                    attributes: attributes, timeUnixNano: time, sessionId: sessionId))
        case "crash":
            return .crash(
                CrashReport(
                    crashId: try optionalString(root, "crashId"), message: try requiredString(root, "message"),
                    stack: try optionalString(root, "stack"), exceptionType: try optionalString(root, "exceptionType"),
                    attributes: attributes, timeUnixNano: time, sessionId: sessionId))
        case "span":
            var spanAttributes = attributes
            if let sessionId { spanAttributes["session.id"] = .string(sessionId) }
            let start = try timestamp(root["start"], "start") ?? time
            return .span(
                SpanEntry(
                    name: try requiredString(root, "name"), traceId: try optionalString(root, "traceId"),
                    spanId: try optionalString(root, "spanId"), parentSpanId: try optionalString(root, "parentSpanId"),
                    kind: try spanKind(root["kind"]), startTimeUnixNano: start,
                    endTimeUnixNano: try timestamp(root["end"], "end"), status: try spanStatus(root["status"]),
                    statusMessage: try optionalString(root, "statusMessage"), attributes: spanAttributes))
        case "metric":
            var pointAttributes = attributes
            if let sessionId { pointAttributes["session.id"] = .string(sessionId) }
            return .metric(
                MetricPoint(
                    name: try requiredString(root, "name"), value: try metricValue(root["value"]),
                    kind: try metricKind(root), unit: try optionalString(root, "unit"), attributes: pointAttributes,
                    startTimeUnixNano: try timestamp(root["start"], "start"), timeUnixNano: time))
        case "exit":
            var code: Int64?
            if let node = root["code"] {
                guard let value = node.int64 else { throw fail("`code` must be an integer") }
                code = value
            }
            return .exit(
                ExitRecord(
                    reason: try requiredString(root, "reason"), code: code, attributes: attributes, timeUnixNano: time,
                    sessionId: sessionId))
        case "session_summary":
            guard let sessionId else { throw fail("missing string field `sessionId`") }
            var duration: Int64?
            if let node = root["durationMs"] {
                guard let value = node.int64, value >= 0 else {
                    throw fail("`durationMs` must be a non-negative integer")
                }
                duration = value
            }
            return .sessionSummary(
                SessionSummary(
                    sessionId: sessionId, durationMilliseconds: duration, attributes: attributes, timeUnixNano: time))
        default:
            return .attachment(
                Attachment(
                    path: try requiredString(root, "path"), name: try optionalString(root, "name"),
                    contentType: try optionalString(root, "contentType"), crashId: try optionalString(root, "crashId"),
                    attributes: attributes, timeUnixNano: time))
        }
    }

    // MARK: - Fields

    private func requiredString(_ object: JSONNode, _ key: String) throws -> String {
        guard let node = object[key] else { throw fail("missing string field `\(key)`") }
        guard let value = node.string else { throw fail("`\(key)` must be a string") }
        guard !value.isEmpty else { throw fail("`\(key)` must not be empty") }
        return value
    }

    private func optionalString(_ object: JSONNode, _ key: String) throws -> String? {
        guard let node = object[key] else { return nil }
        guard let value = node.string else { throw fail("`\(key)` must be a string") }
        return value
    }

    /// Epoch milliseconds (a number, fractions allowed) or an RFC 3339 string, as nanoseconds.
    private func timestamp(_ node: JSONNode?, _ key: String) throws -> Int64? {
        guard let node else { return nil }
        if let text = node.string {
            guard let nanos = RFC3339.epochNanoseconds(text) else {
                throw fail("`\(key)` is not an RFC 3339 date-time")
            }
            return nanos
        }
        if let millis = node.int64 {
            guard millis >= 0, millis <= Int64.max / 1_000_000 else { throw fail("`\(key)` is out of range") }
            return millis * 1_000_000
        }
        if let millis = node.double {
            guard millis.isFinite, millis >= 0, millis < Double(Int64.max / 1_000_000) else {
                throw fail("`\(key)` is out of range")
            }
            return Int64((millis * 1_000_000).rounded())
        }
        throw fail("`\(key)` must be epoch milliseconds or an RFC 3339 string")
    }

    private func attributeMap(_ node: JSONNode?) throws -> [String: AttributeValue] {
        guard let node else { return [:] }
        guard node.kind == .object else { throw fail("`attributes` must be an object") }
        var result: [String: AttributeValue] = [:]
        for (key, value) in node.members {
            guard !key.isEmpty else { throw fail("attribute keys must not be empty") }
            result[key] = try attributeValue(value, key)
        }
        return result
    }

    private func attributeValue(_ node: JSONNode, _ key: String) throws -> AttributeValue {
        switch node.kind {
        case .string: return .string(node.string ?? "")
        case .bool: return .bool(node.bool ?? false)
        case .int:
            return .int(node.int64 ?? 0)
        case .uint:
            throw fail("attribute `\(clip(key))` does not fit a signed 64-bit integer")
        case .double: return .double(node.double ?? 0)
        case .array: return .array(try node.elements.map { try attributeValue($0, key) })
        case .object:
            var map: [String: AttributeValue] = [:]
            for (member, value) in node.members {
                map[member] = try attributeValue(value, key + "." + member)
            }
            return .map(map)
        case .null:
            throw fail("attribute `\(clip(key))` must not be null")
        }
    }

    private func severity(_ node: JSONNode?) throws -> Severity {
        guard let node else { return .info }
        if let text = node.string?.lowercased() {
            // `warning` is accepted as a spelling of `warn`.
            return try named(
                text == "warning" ? "warn" : text, field: "severity",
                ["trace": .trace, "debug": .debug, "info": .info, "warn": .warn, "error": .error, "fatal": .fatal])
        }
        if let number = node.int64, (1...24).contains(number) {
            // Round down to the base of the OTLP range (1–4 TRACE, 5–8 DEBUG, …).
            return Severity(rawValue: Int((number - 1) / 4 * 4 + 1)) ?? .info
        }
        throw fail("`severity` must be a name or a number from 1 to 24")
    }

    private func spanKind(_ node: JSONNode?) throws -> SpanEntry.Kind {
        guard let node else { return .internal }
        return try named(
            node.string, field: "kind",
            ["internal": .internal, "server": .server, "client": .client, "producer": .producer, "consumer": .consumer])
    }

    private func spanStatus(_ node: JSONNode?) throws -> SpanEntry.Status {
        guard let node else { return .unset }
        return try named(node.string, field: "status", ["unset": .unset, "ok": .ok, "error": .error])
    }

    private func metricValue(_ node: JSONNode?) throws -> MetricPoint.Value {
        guard let node else { throw fail("missing number field `value`") }
        switch node.kind {
        case .int: return .int(node.int64 ?? 0)
        case .double:
            guard let value = node.double, value.isFinite else { throw fail("`value` must be finite") }
            return .double(value)
        default: throw fail("`value` must be a number")
        }
    }

    private func metricKind(_ object: JSONNode) throws -> MetricPoint.Kind {
        let kind = try optionalString(object, "kind") ?? "gauge"
        switch kind {
        case "gauge":
            guard object["monotonic"] == nil, object["temporality"] == nil else {
                throw fail("`monotonic` and `temporality` apply to sums only")
            }
            return .gauge
        case "sum":
            var monotonic = true
            if let node = object["monotonic"] {
                guard let flag = node.bool else { throw fail("`monotonic` must be a boolean") }
                monotonic = flag
            }
            let temporality: MetricPoint.Temporality = try named(
                optionalString(object, "temporality") ?? "cumulative", field: "temporality",
                ["cumulative": .cumulative, "delta": .delta])
            return .sum(monotonic: monotonic, temporality: temporality)
        default:
            throw fail("`kind` must be gauge or sum")
        }
    }

    /// The value `text` names in `choices`; any other text (or none) fails with
    /// "`field` must be a, b or c", the names in their order.
    private func named<Value>(_ text: String?, field: String, _ choices: KeyValuePairs<String, Value>) throws -> Value {
        if let text, let choice = choices.first(where: { $0.key == text }) {
            return choice.value
        }
        let names = choices.map(\.key)
        throw fail("`\(field)` must be \(names.dropLast().joined(separator: ", ")) or \(names[names.count - 1])")
    }

    /// Keeps echoed input short in messages.
    private func clip(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }
}
