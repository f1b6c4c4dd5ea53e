import Foundation
import OTLPProtobuf
import PulseHashing
import PulseJSON
import PulseKit
import PulseTestSupport
import Testing

@testable import PulseUploader

@Suite struct RecordEncoderTests {
    let clock: ManualClock
    let encoder: RecordEncoder

    init() {
        clock = ManualClock(1_700_000_000_000)
        encoder = RecordEncoder(clock: clock.uploaderClock, random: RandomSource(seed: 1), policy: UploadPolicy())
    }

    func parse(_ record: EncodedRecord) throws -> JSONNode {
        try JSONParser().parse(record.fragment).root
    }

    @Test func everyLogRecordKindGetsALogRecordUID() throws {
        let records: [TelemetryRecord] = [
            .log(LogEntry(body: "hello")),
            .event(EventEntry(name: "launch")),
            .crash(CrashReport(message: "boom")),
            .exit(ExitRecord(reason: "user")),
            .sessionSummary(SessionSummary(sessionId: "s")),
        ]
        var uids: Set<String> = []
        for record in records {
            let encoded = try encoder.encode(record)
            #expect(encoded.signal == .logs)
            let uid = attribute(try parse(encoded)["attributes"], "log.record.uid")?["stringValue"]?.string
            #expect(uid == encoded.recordId)
            #expect(ULIDGenerator.isValid(encoded.recordId), "\(encoded.recordId) is a ULID")
            uids.insert(encoded.recordId)
        }
        #expect(uids.count == records.count)
    }

    @Test func logRecordsFollowTheOTLPJSONMapping() throws {
        let encoded = try encoder.encode(
            .log(
                LogEntry(
                    body: "disk low", severity: .warn, attributes: ["free": 12, "ratio": 0.5, "ok": false],
                    timeUnixNano: 1_699_999_999_000_000_001, sessionId: "sess-1")))
        let node = try parse(encoded)
        #expect(encoded.recordClass == .standard)
        #expect(node["timeUnixNano"]?.string == "1699999999000000001")
        #expect(node["observedTimeUnixNano"]?.string == "1700000000000000000")
        #expect(node["severityNumber"]?.int64 == 13)
        #expect(node["severityText"]?.string == "WARN")
        #expect(node["body"]?["stringValue"]?.string == "disk low")
        #expect(attribute(node["attributes"], "free")?["intValue"]?.string == "12")
        #expect(attribute(node["attributes"], "ratio")?["doubleValue"]?.double == 0.5)
        #expect(attribute(node["attributes"], "ok")?["boolValue"]?.bool == false)
        #expect(attribute(node["attributes"], "session.id")?["stringValue"]?.string == "sess-1")
        // Attributes are sorted, so equal records encode identically.
        let keys = node["attributes"]?.elements.compactMap { $0["key"]?.string } ?? []
        #expect(keys == keys.sorted())
    }

    @Test func crashesCarryTheirCrashIdAndAreCrashClass() throws {
        let given = try encoder.encode(.crash(CrashReport(crashId: "crash-42", message: "SIGSEGV", stack: "#0 main")))
        #expect(given.recordClass == .crash)
        #expect(given.crashId == "crash-42")
        let node = try parse(given)
        #expect(attribute(node["attributes"], "app.crash.id")?["stringValue"]?.string == "crash-42")
        #expect(attribute(node["attributes"], "exception.stacktrace")?["stringValue"]?.string == "#0 main")
        #expect(attribute(node["attributes"], "event.name")?["stringValue"]?.string == "device.crash")
        #expect(node["severityNumber"]?.int64 == 21)
        let generated = try encoder.encode(.crash(CrashReport(message: "SIGABRT")))
        #expect(generated.crashId.map { Hex.isLowercaseHex($0, length: 32) } == true)
    }

    @Test func lifecycleRecordsAreEventsOfTheLifecycleClass() throws {
        let exit = try encoder.encode(.exit(ExitRecord(reason: "signal", code: 137)))
        #expect(exit.recordClass == .lifecycle)
        let exitNode = try parse(exit)
        #expect(exitNode["eventName"]?.string == "app.exit")
        #expect(attribute(exitNode["attributes"], "app.exit.code")?["intValue"]?.string == "137")
        let summary = try encoder.encode(.sessionSummary(SessionSummary(sessionId: "s1", durationMilliseconds: 5)))
        #expect(summary.recordClass == .lifecycle)
        #expect(attribute(try parse(summary)["attributes"], "app.session.duration_ms")?["intValue"]?.string == "5")
    }

    @Test func spansKeepOrGenerateTheirIds() throws {
        let given = try encoder.encode(
            .span(
                SpanEntry(
                    name: "GET /items", traceId: "0123456789abcdef0123456789abcdef", spanId: "0123456789abcdef",
                    kind: .client, startTimeUnixNano: 10, endTimeUnixNano: 30, status: .error)))
        #expect(given.signal == .traces)
        #expect(given.recordId == "0123456789abcdef0123456789abcdef0123456789abcdef")
        let node = try parse(given)
        #expect(node["kind"]?.int64 == 3)
        #expect(node["startTimeUnixNano"]?.string == "10")
        #expect(node["endTimeUnixNano"]?.string == "30")
        #expect(node["status"]?["code"]?.int64 == 2)
        let generated = try parse(try encoder.encode(.span(SpanEntry(name: "work"))))
        #expect(generated["traceId"]?.string.map { Hex.isLowercaseHex($0, length: 32) } == true)
        #expect(generated["spanId"]?.string.map { Hex.isLowercaseHex($0, length: 16) } == true)
    }

    @Test func invalidSpansAreRejected() {
        for span in [
            SpanEntry(name: ""),
            SpanEntry(name: "x", traceId: "00000000000000000000000000000000"),
            SpanEntry(name: "x", traceId: "ABCDEF0123456789ABCDEF0123456789"),
            SpanEntry(name: "x", spanId: "123"),
            SpanEntry(name: "x", startTimeUnixNano: 20, endTimeUnixNano: 10),
        ] {
            #expect(throws: UploaderError.self) { try encoder.encode(.span(span)) }
        }
    }

    @Test func metricPointsCarryTheirSeriesIdentity() throws {
        let encoded = try encoder.encode(
            .metric(
                MetricPoint(
                    name: "requests", value: .int(7), kind: .sum(monotonic: true, temporality: .delta), unit: "1",
                    attributes: ["route": "/a"], startTimeUnixNano: 100, timeUnixNano: 200)))
        #expect(encoded.signal == .metrics)
        #expect(encoded.recordId == "requests|100|200")
        let node = try parse(encoded)
        #expect(node["sum"]?["aggregationTemporality"]?.int64 == 1)
        #expect(node["sum"]?["isMonotonic"]?.bool == true)
        let point = node["sum"]?["dataPoints"]?[0]
        #expect(point?["asInt"]?.string == "7")
        #expect(attribute(point?["attributes"], "route")?["stringValue"]?.string == "/a")
        let gauge = try parse(try encoder.encode(.metric(MetricPoint(name: "temp", value: .double(21.5)))))
        #expect(gauge["gauge"]?["dataPoints"]?[0]?["asDouble"]?.double == 21.5)
        #expect(throws: UploaderError.self) {
            try encoder.encode(.metric(MetricPoint(name: "bad", value: .double(.nan))))
        }
    }

    @Test func attachmentsCopyTheFileWithItsChecksum() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/trace.bin"
        let content: [UInt8] = (0..<5_000).map { UInt8($0 % 251) }
        try Data(content).write(to: URL(fileURLWithPath: path))
        let encoded = try encoder.encode(
            .attachment(Attachment(path: path, contentType: "application/octet-stream", crashId: "c-1")))
        #expect(encoded.recordClass == .attachment)
        let node = try parse(encoded)
        #expect(attribute(node["attributes"], "attachment.name")?["stringValue"]?.string == "trace.bin")
        #expect(attribute(node["attributes"], "attachment.sha256")?["stringValue"]?.string == sha256Hex(content))
        #expect(attribute(node["attributes"], "attachment.crash_id")?["stringValue"]?.string == "c-1")
        let base64 = node["body"]?["bytesValue"]?.string ?? ""
        #expect(Data(base64Encoded: base64).map { [UInt8]($0) } == content)

        var small = UploadPolicy()
        small.maximumAttachmentBytes = 1_000
        let strict = RecordEncoder(clock: clock.uploaderClock, random: RandomSource(seed: 1), policy: small)
        #expect(throws: UploaderError.self) { try strict.encode(.attachment(Attachment(path: path))) }
        #expect(throws: UploaderError.self) { try encoder.encode(.attachment(Attachment(path: directory.path))) }
        #expect(throws: UploaderError.self) { try encoder.encode(.attachment(Attachment(path: path + ".missing"))) }
    }
}
