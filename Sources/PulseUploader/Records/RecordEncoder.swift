import Foundation
import OTLPProtobuf
import PulseHashing
import PulseJSON
import PulseKit
import PulseProtocol

/// Validates records and encodes each into its OTLP/HTTP JSON item (the protobuf JSON mapping: lowerCamelCase
/// keys, 64-bit integers as decimal strings, ids as lowercase hex, enums as integers).
///
/// Ids are assigned here, once, when the record is created: `log.record.uid` (a ULID) on every log record, a generated
/// `app.crash.id` for crashes without one, trace and span ids for spans without them.
struct RecordEncoder: Sendable {
    let clock: UploaderClock
    let random: RandomSource
    let policy: UploadPolicy
    /// Makes `log.record.uid` values (ULIDs, monotonic within the uploader).
    let recordIds: ULIDGenerator

    /// An encoder; `recordIds` is the uploader's generator (a fresh one draws from `random`).
    init(clock: UploaderClock, random: RandomSource, policy: UploadPolicy, recordIds: ULIDGenerator? = nil) {
        self.clock = clock
        self.random = random
        self.policy = policy
        self.recordIds = recordIds ?? ULIDGenerator(random: random)
    }

    /// The attribute naming the uploader-assigned record id of log records.
    static let recordUIDKey = "log.record.uid"

    /// Encodes `record` and checks it against the one per-record limit a gateway applies.
    ///
    /// - Throws: ``UploaderError/Code/oversized`` when the encoding is larger than `PulseLimits.eventMaxBytes`
    ///   (57,344 bytes; `PulseLimits.crashMaxBytes`, 1,040,384, for crash reports): the gateway would drop the
    ///   mapped event, so the record is refused now instead of acknowledged and lost.
    func encode(_ record: TelemetryRecord) throws(UploaderError) -> EncodedRecord {
        let encoded = try encodeUnchecked(record)
        let limit = encoded.recordClass == .crash ? PulseLimits.crashMaxBytes : PulseLimits.eventMaxBytes
        guard encoded.fragment.count <= limit else {
            throw UploaderError(
                .oversized,
                "the record encodes to \(encoded.fragment.count) bytes, more than the \(limit) bytes a Pulse"
                    + " \(encoded.recordClass == .crash ? "crash report" : "event") may have")
        }
        return encoded
    }

    private func encodeUnchecked(_ record: TelemetryRecord) throws(UploaderError) -> EncodedRecord {
        let now = clock.nowMilliseconds()
        let nowNanos = now &* 1_000_000
        switch record {
        case .log(let entry):
            return logRecord(
                recordClass: .standard, now: now, time: entry.timeUnixNano ?? nowNanos, severity: entry.severity,
                body: .string(entry.body), eventName: nil, sessionId: entry.sessionId, crashId: nil,
                fixed: [], attributes: entry.attributes)
        case .event(let entry):
            try requireNonEmpty(entry.name, "event name")
            return logRecord(
                recordClass: .standard, now: now, time: entry.timeUnixNano ?? nowNanos, severity: .info, body: nil,
                eventName: entry.name, sessionId: entry.sessionId, crashId: nil, fixed: [],
                attributes: entry.attributes)
        case .crash(let report):
            try requireNonEmpty(report.message, "crash message")
            let crashId = report.crashId ?? random.identifier()
            try requireIdentifier(crashId, "crashId")
            var fixed: [(String, AttributeValue)] = [
                ("app.crash.id", .string(crashId)), ("exception.message", .string(report.message)),
            ]
            if let stack = report.stack { fixed.append(("exception.stacktrace", .string(stack))) }
            if let type = report.exceptionType { fixed.append(("exception.type", .string(type))) }
            return logRecord(
                recordClass: .crash, now: now, time: report.timeUnixNano ?? nowNanos, severity: .fatal,
                body: .string(report.message), eventName: "device.crash", sessionId: report.sessionId,
                crashId: crashId, fixed: fixed, attributes: report.attributes)
        case .exit(let exit):
            try requireNonEmpty(exit.reason, "exit reason")
            var fixed: [(String, AttributeValue)] = [("app.exit.reason", .string(exit.reason))]
            if let code = exit.code { fixed.append(("app.exit.code", .int(code))) }
            return logRecord(
                recordClass: .lifecycle, now: now, time: exit.timeUnixNano ?? nowNanos, severity: .info, body: nil,
                eventName: "app.exit", sessionId: exit.sessionId, crashId: nil, fixed: fixed,
                attributes: exit.attributes)
        case .sessionSummary(let summary):
            try requireNonEmpty(summary.sessionId, "session summary sessionId")
            var fixed: [(String, AttributeValue)] = []
            if let duration = summary.durationMilliseconds {
                fixed.append(("app.session.duration_ms", .int(duration)))
            }
            return logRecord(
                recordClass: .lifecycle, now: now, time: summary.timeUnixNano ?? nowNanos, severity: .info,
                body: nil, eventName: "app.session.summary", sessionId: summary.sessionId, crashId: nil,
                fixed: fixed, attributes: summary.attributes)
        case .attachment(let attachment):
            return try encodeAttachment(attachment, now: now, nowNanos: nowNanos)
        case .span(let span):
            return try encodeSpan(span, now: now, nowNanos: nowNanos)
        case .metric(let point):
            return try encodeMetric(point, now: now, nowNanos: nowNanos)
        }
    }

    // MARK: - Log records

    private func logRecord(
        recordClass: RecordClass, now: Int64, time: Int64, severity: Severity, body: AttributeValue?,
        eventName: String?, sessionId: String?, crashId: String?, fixed: [(String, AttributeValue)],
        attributes: [String: AttributeValue]
    ) -> EncodedRecord {
        let uid = recordIds.next(milliseconds: now)
        var merged = attributes
        for (key, value) in fixed {
            merged[key] = value
        }
        merged[RecordEncoder.recordUIDKey] = .string(uid)
        if let eventName { merged["event.name"] = .string(eventName) }
        if let sessionId { merged["session.id"] = .string(sessionId) }

        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.field("timeUnixNano", String(time))
        writer.field("observedTimeUnixNano", String(now &* 1_000_000))
        writer.field("severityNumber", severity.rawValue)
        writer.field("severityText", severity.text)
        if let eventName {
            writer.field("eventName", eventName)
        }
        if let body {
            writer.key("body")
            OTLPJSON.writeAnyValue(body, to: &writer)
        }
        writer.key("attributes")
        OTLPJSON.writeAttributes(merged, to: &writer)
        writer.endObject()
        return EncodedRecord(
            signal: .logs, recordClass: recordClass, recordId: uid, crashId: crashId, createdMilliseconds: now,
            fragment: writer.bytes)
    }

    private func encodeAttachment(_ attachment: Attachment, now: Int64, nowNanos: Int64) throws(UploaderError)
        -> EncodedRecord
    {
        try requireNonEmpty(attachment.path, "attachment path")
        let content = try readFile(attachment.path, limit: policy.maximumAttachmentBytes)
        let name = attachment.name ?? (attachment.path as NSString).lastPathComponent
        var fixed: [(String, AttributeValue)] = [
            ("attachment.name", .string(name)),
            ("attachment.content_type", .string(attachment.contentType ?? "application/octet-stream")),
            ("attachment.size", .int(Int64(content.count))),
            ("attachment.sha256", .string(SHA256.hexDigest(content))),
        ]
        if let crashId = attachment.crashId { fixed.append(("attachment.crash_id", .string(crashId))) }
        return logRecord(
            recordClass: .attachment, now: now, time: attachment.timeUnixNano ?? nowNanos, severity: .info,
            body: .bytes(content), eventName: "app.attachment", sessionId: nil, crashId: nil, fixed: fixed,
            attributes: attachment.attributes)
    }

    private func readFile(_ path: String, limit: Int) throws(UploaderError) -> [UInt8] {
        let url = URL(fileURLWithPath: path)
        let size: Int
        do {
            let values = try url.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey])
            guard values.isRegularFile == true else {
                throw UploaderError(.fileAccess, "attachment `\(path)` is not a regular file")
            }
            size = values.fileSize ?? 0
        } catch let error as UploaderError {
            throw error
        } catch {
            throw UploaderError(.fileAccess, "cannot read attachment `\(path)`", underlying: error)
        }
        guard size <= limit else {
            throw UploaderError(
                .oversized,
                "attachment `\(path)` has \(size) bytes, more than the \(limit) allowed (maximumAttachmentBytes)")
        }
        do {
            let data = try Data(contentsOf: url)
            guard data.count <= limit else {
                throw UploaderError(
                    .oversized,
                    "attachment `\(path)` has \(data.count) bytes, more than the \(limit) allowed (maximumAttachmentBytes)"
                )
            }
            return [UInt8](data)
        } catch let error as UploaderError {
            throw error
        } catch {
            throw UploaderError(.fileAccess, "cannot read attachment `\(path)`", underlying: error)
        }
    }

    // MARK: - Spans

    private func encodeSpan(_ span: SpanEntry, now: Int64, nowNanos: Int64) throws(UploaderError) -> EncodedRecord {
        try requireNonEmpty(span.name, "span name")
        let traceId = span.traceId ?? random.hex(byteCount: 16)
        let spanId = span.spanId ?? random.hex(byteCount: 8)
        try require(
            Hex.isLowercaseHex(traceId, length: 32) && !Hex.isAllZeros(traceId),
            "traceId must be 32 lowercase hex characters, not all zero")
        try require(
            Hex.isLowercaseHex(spanId, length: 16) && !Hex.isAllZeros(spanId),
            "spanId must be 16 lowercase hex characters, not all zero")
        try require(
            span.parentSpanId.map { Hex.isLowercaseHex($0, length: 16) } ?? true,
            "parentSpanId must be 16 lowercase hex characters")
        let start = span.startTimeUnixNano ?? nowNanos
        let end = span.endTimeUnixNano ?? start
        try require(end >= start, "span end is before its start")
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.field("traceId", traceId)
        writer.field("spanId", spanId)
        if let parent = span.parentSpanId {
            writer.field("parentSpanId", parent)
        }
        writer.field("name", span.name)
        writer.field("kind", span.kind.rawValue)
        writer.field("startTimeUnixNano", String(start))
        writer.field("endTimeUnixNano", String(end))
        writer.key("attributes")
        OTLPJSON.writeAttributes(span.attributes, to: &writer)
        writer.key("status")
        writer.beginObject()
        writer.field("code", span.status.rawValue)
        if let message = span.statusMessage {
            writer.field("message", message)
        }
        writer.endObject()
        writer.endObject()
        return EncodedRecord(
            signal: .traces, recordClass: .standard, recordId: traceId + spanId, crashId: nil,
            createdMilliseconds: now, fragment: writer.bytes)
    }

    // MARK: - Metrics

    private func encodeMetric(_ point: MetricPoint, now: Int64, nowNanos: Int64) throws(UploaderError)
        -> EncodedRecord
    {
        try requireNonEmpty(point.name, "metric name")
        if case .double(let value) = point.value {
            try require(value.isFinite, "metric value must be finite")
        }
        let time = point.timeUnixNano ?? nowNanos
        let start = point.startTimeUnixNano ?? time
        try require(time >= start, "metric start is after its time")
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.field("name", point.name)
        if let unit = point.unit {
            writer.field("unit", unit)
        }
        switch point.kind {
        case .gauge:
            writer.key("gauge")
            writer.beginObject()
        case .sum(let monotonic, let temporality):
            writer.key("sum")
            writer.beginObject()
            writer.field("aggregationTemporality", temporality.rawValue)
            writer.field("isMonotonic", monotonic)
        }
        writer.key("dataPoints")
        writer.beginArray()
        writer.beginObject()
        writer.field("startTimeUnixNano", String(start))
        writer.field("timeUnixNano", String(time))
        switch point.value {
        case .int(let value):
            writer.field("asInt", String(value))
        case .double(let value):
            writer.field("asDouble", value)
        }
        writer.key("attributes")
        OTLPJSON.writeAttributes(point.attributes, to: &writer)
        writer.endObject()
        writer.endArray()
        writer.endObject()
        writer.endObject()
        return EncodedRecord(
            signal: .metrics, recordClass: .standard, recordId: "\(point.name)|\(start)|\(time)", crashId: nil,
            createdMilliseconds: now, fragment: writer.bytes)
    }

    // MARK: - Validation

    /// Throws ``UploaderErrorCode/invalidRecord`` with `message` (positioned at the caller) unless
    /// `condition` holds.
    private func require(
        _ condition: Bool, _ message: @autoclosure () -> String, file: String = #fileID, line: UInt = #line
    ) throws(UploaderError) {
        guard condition else {
            throw UploaderError(.invalidRecord, message(), file: file, line: line)
        }
    }

    private func requireNonEmpty(_ value: String, _ name: String) throws(UploaderError) {
        try require(!value.isEmpty, "\(name) must not be empty")
    }

    private func requireIdentifier(_ value: String, _ name: String) throws(UploaderError) {
        try require(!value.isEmpty && value.utf8.count <= 128, "\(name) must be 1–128 characters")
    }
}
