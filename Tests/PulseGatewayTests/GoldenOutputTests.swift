import Foundation
import MsgTrans
import OTLPProtobuf
import PulseHTTP
import PulseJSON
import Synchronization
import Testing

@testable import PulseGateway

/// Pins the exact bytes the gateway writes: every Pulse batch the mapper produces (events,
/// crashes, crash fallbacks, CONNECT identities) for each mapping fixture, from OTLP/JSON and from
/// OTLP protobuf, plus the intake's answers and the log line.
///
/// The expected output lives in `Golden/<case>.txt`. After a deliberate change of the wire format,
/// regenerate with `PULSEGATE_REGENERATE_GOLDEN=1 swift test --filter GoldenOutputTests` and review
/// the diff.
@Suite struct GoldenOutputTests {
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let root = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()
    static let protobufFixtures = root.appendingPathComponent("Tests/OTLPProtobufTests/Fixtures")
    /// Parsers as the intake configures them.
    static let parsers = JSONParserPool(capacity: 2, maxDepth: 64, maxBytes: 1 << 24, bigIntegersAsDoubles: true)

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var json: String
        var signal: OTLPSignal
        var batchID = "b-1"
        var receivedAt: Int64 = 1_700_000_100_000
        var sentAt: Int64? = nil
        var fallbacks = IdentityFallbacks()
        var testDescription: String { name }
    }

    static let fixtureFallbacks = IdentityFallbacks(
        deviceID: "dev-9", appVersion: "1.0.0", buildNumber: 7, sdkVersion: "otel/1.2.3", platform: "android",
        packageName: "com.example.fixture")

    static var cases: [Case] {
        var cases: [Case] = [
            Case(name: "logs-three-records", json: MappingTests.threeRecords, signal: .logs),
            Case(name: "logs-kinds", json: OTLP.logs(records: logKindRecords), signal: .logs),
            Case(name: "logs-crash", json: crashLogs, signal: .logs),
            Case(name: "traces-spans", json: spans, signal: .traces),
            Case(name: "traces-defaults", json: defaultSpans, signal: .traces),
            Case(name: "metrics-points", json: metrics, signal: .metrics),
            Case(
                name: "logs-clock-offset", json: OTLP.logs(records: [OTLP.record(1_700_000_000)]), signal: .logs,
                receivedAt: 1_700_000_600_000, sentAt: 1_700_000_000_000),
            Case(name: "logs-split-count", json: splitByCount, signal: .logs),
            Case(name: "logs-split-bytes", json: splitByBytes, signal: .logs),
            Case(name: "logs-nested-redaction", json: nested, signal: .logs),
            Case(name: "logs-escapes-and-numbers", json: escapes, signal: .logs),
            Case(
                name: "logs-header-fallbacks",
                json: OTLP.logs(resource: [OTLP.string("os.name", "Android")], records: [OTLP.record(1)]),
                signal: .logs,
                fallbacks: IdentityFallbacks(
                    installationID: "i-9", appVersion: "9.9", buildNumber: 99, sdkVersion: "sdk/1",
                    packageName: "pkg", deviceType: "tablet")),
        ]
        if let data = FileManager.default.contents(
            atPath: root.appendingPathComponent("docs/examples/otlp-logs.json").path)
        {
            cases.append(Case(name: "docs-example", json: String(decoding: data, as: UTF8.self), signal: .logs))
        }
        for fixture in protobufFixtureNames {
            let signal: OTLPSignal =
                fixture.hasPrefix("logs") ? .logs : fixture.hasPrefix("traces") ? .traces : .metrics
            let path = protobufFixtures.appendingPathComponent(fixture + ".json").path
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            cases.append(
                Case(
                    name: "fixture-" + fixture, json: String(decoding: data, as: UTF8.self), signal: signal,
                    fallbacks: fixtureFallbacks))
        }
        return cases
    }

    static let protobufFixtureNames = [
        "logs-basic", "logs-empty", "logs-merge-semantics", "logs-unknown-fields", "logs-values", "logs-varints",
        "metrics-all-types", "metrics-empty", "metrics-exponential-histogram", "metrics-gauge", "metrics-histogram",
        "metrics-oneof-switch", "metrics-packed-unpacked", "metrics-sum", "metrics-summary", "traces-basic",
        "traces-empty-and-defaults", "traces-empty",
    ]

    static let logKindRecords = [
        #"{"timeUnixNano":"1700000000000000000","attributes":[{"key":"event.name","value":{"stringValue":"breadcrumb.tap"}}]}"#,
        #"{"timeUnixNano":"1700000000000000000","attributes":[{"key":"event.name","value":{"stringValue":"pulsegate.diagnostics"}}]}"#,
        #"{"timeUnixNano":"1700000000000000000","attributes":[{"key":"event.name","value":{"stringValue":"device.crash"}}]}"#,
        #"{"timeUnixNano":"1700000000000000000","attributes":[{"key":"exception.type","value":{"stringValue":"IOError"}}]}"#,
        #"{"timeUnixNano":"1700000000000000000","attributes":[],"severityNumber":21}"#,
        #"{"timeUnixNano":"1700000000000000000","attributes":[],"severityNumber":"SEVERITY_NUMBER_WARN"}"#,
        #"{"timeUnixNano":"1700000000000000000","attributes":[{"key":"apsio.event.kind","value":{"stringValue":"Performance"}}],"eventName":"x"}"#,
        #"{"observedTimeUnixNano":"1700000000500000000","attributes":[{"key":"session.id","value":{"stringValue":"s-7"}},{"key":"app.build_id","value":{"stringValue":"B-1"}}],"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174"}"#,
    ]

    static let crashLogs = OTLP.logs(
        records: OTLP.crash42Records(more: [OTLP.string("session.id", "s-1")]) + [
            OTLP.record(
                1_700_000_004,
                attributes: [
                    OTLP.string("exception.type", "NSException"), OTLP.string("app.crash.id", "crash-43"),
                    #"{"key":"app.image_uuids","value":{"arrayValue":{"values":[{"stringValue":"UUID-A"},{"stringValue":"UUID-B"}]}}}"#,
                ], extra: #","eventName":"device.crash""#)
        ])

    static let spans = OTLP.spans(spans: [
        #"{"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174","name":"GET /items","kind":3,"startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000250000000","status":{"code":1},"attributes":[{"key":"http.url","value":{"stringValue":"https://h/items?x=1"}}]}"#,
        #"{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b175","name":"render","kind":"SPAN_KIND_CLIENT","startTimeUnixNano":"1700000001000000000","endTimeUnixNano":"1700000001100000000","status":{"code":"STATUS_CODE_ERROR","message":"boom"},"attributes":[]}"#,
        #"{"traceId":"","spanId":"","name":"","startTimeUnixNano":"1700000002000000000"}"#,
    ])

    static let defaultSpans = OTLP.spans(spans: [
        #"{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"render","kind":0,"startTimeUnixNano":"1700000000000000000","status":{"code":0}}"#
    ])

    static let metrics = OTLP.metrics(metrics: [
        #"{"name":"process.runtime.jvm.memory","unit":"By","gauge":{"dataPoints":[{"timeUnixNano":"1700000000000000000","asInt":"1024","attributes":[{"key":"pool","value":{"stringValue":"heap"}}]}]}}"#,
        #"{"name":"app.frame_time","unit":"ms","histogram":{"dataPoints":[{"startTimeUnixNano":"1699999990000000000","timeUnixNano":"1700000000000000000","count":"3","sum":30.5,"bucketCounts":["1","2"],"explicitBounds":[16.0],"min":1.5,"max":20}]}}"#,
        #"{"name":"requests","sum":{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":[{"timeUnixNano":"1700000000000000000","asDouble":0.1}]}}"#,
        #"{"name":"latency","summary":{"dataPoints":[{"timeUnixNano":"1700000000000000000","count":"2","sum":1e-05,"quantileValues":[{"quantile":0.5,"value":1e16}]}]}}"#,
        #"{"name":"sizes","exponentialHistogram":{"dataPoints":[{"timeUnixNano":"1700000000000000000","count":"4","scale":2,"zeroCount":"1","positive":{"offset":-1,"bucketCounts":["1","2"]},"negative":{"bucketCounts":[]}}]}}"#,
    ])

    static let splitByCount = OTLP.logs(
        records: (0..<130).map {
            OTLP.record(1_700_000_000 + $0, attributes: [OTLP.string("log.record.uid", "u-\($0)")])
        })

    static var splitByBytes: String {
        let big = String(repeating: "x", count: 20_000)
        let huge = String(repeating: "y", count: 70_000)
        var records = (0..<5).map {
            OTLP.record(
                1_700_000_000, attributes: [OTLP.string("log.record.uid", "u-\($0)"), OTLP.string("blob", big)])
        }
        records.insert(
            OTLP.record(1_700_000_000, attributes: [OTLP.string("log.record.uid", "huge"), OTLP.string("blob", huge)]),
            at: 2)
        return OTLP.logs(records: records)
    }

    static let nested = OTLP.logs(records: [
        OTLP.record(
            1,
            attributes: [
                #"{"key":"ctx","value":{"kvlistValue":{"values":[{"key":"user","value":{"stringValue":"u"}},{"key":"apiKey","value":{"stringValue":"k"}},{"key":"tags","value":{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":3},{"bytesValue":"AAE="},{"doubleValue":-0.0},{"boolValue":false},{}]}}}]}}}"#,
                OTLP.string("Set-Cookie", "x"), OTLP.string("db.password", "p"),
                OTLP.string("url.full", "https://user:pw@h.example/p?q=1"), OTLP.string("http.url", "/relative?x"),
            ])
    ])

    static let escapes = OTLP.logs(records: [
        OTLP.record(
            1_700_000_000,
            attributes: [
                #"{"key":"quote\"back\\slash","value":{"stringValue":"tab\tnl\nctl\u0001 \u2028 é 😀"}}"#,
                #"{"key":"big","value":{"doubleValue":1e300}}"#, #"{"key":"neg","value":{"intValue":"-42"}}"#,
                #"{"key":"frac","value":{"doubleValue":123456789012345.5}}"#,
                #"{"key":"integral","value":{"doubleValue":1e15}}"#, #"{"key":"tiny","value":{"doubleValue":5e-324}}"#,
            ], extra: #","body":{"kvlistValue":{"values":[{"key":"k","value":{"stringValue":"v"}}]}}"#)
    ])

    // MARK: Mapping

    @Test(arguments: cases)
    func mappedJSONMatchesTheGoldenBytes(_ testCase: Case) throws {
        try Self.check(testCase.name, Self.render(testCase, body: Array(testCase.json.utf8), protobuf: false))
    }

    @Test(arguments: protobufFixtureNames)
    func mappedProtobufMatchesTheGoldenBytes(_ fixture: String) throws {
        let signal: OTLPSignal = fixture.hasPrefix("logs") ? .logs : fixture.hasPrefix("traces") ? .traces : .metrics
        let data = try #require(
            FileManager.default.contents(atPath: Self.protobufFixtures.appendingPathComponent(fixture + ".pb").path))
        let testCase = Case(name: "protobuf-" + fixture, json: "", signal: signal, fallbacks: Self.fixtureFallbacks)
        try Self.check(testCase.name, Self.render(testCase, body: Array(data), protobuf: true))
    }

    static func render(_ testCase: Case, body: [UInt8], protobuf: Bool) throws -> String {
        // The intake's own path: JSON parsed, protobuf decoded straight into the document model.
        let document = try GatewayIntake.document(
            body, format: protobuf ? .protobuf : .json, signal: testCase.signal, maxBytes: 1 << 24,
            parsers: Self.parsers)
        var out = ""
        let context = MappingContext(
            appID: "shop", batchID: testCase.batchID, receivedAt: testCase.receivedAt, sentAt: testCase.sentAt,
            fallbacks: testCase.fallbacks, sequenceHeader: "5")
        do {
            let mapped = try OTLPMapper.map(document.root, signal: testCase.signal, context: context)
            out += "records \(mapped.records) rejected \(mapped.rejected)\n"
            out += "rejection \(mapped.rejectionMessage(testCase.signal) ?? "-")\n"
            for (index, draft) in mapped.drafts.enumerated() {
                out += "draft \(index) \(draft.kind) batch \(draft.pulseBatchID) records \(draft.recordCount)"
                out += " compression \(draft.compression) priority \(draft.priority) app \(draft.app)\n"
                out += "identityKey \(draft.identityKey)\n"
                out += "identity \(OTLP.text(draft.identity))\n"
                out += "payload \(OTLP.text(draft.payload))\n"
                if let fallback = draft.fallback {
                    for event in EventChunks.split(fallback) ?? [] { out += "fallback \(OTLP.text(event))\n" }
                    // The row as the store keeps it: the payload in wire form.
                    let stored = StoredPayload(
                        encoding: draft.payload, compression: Compression(rawValue: draft.compression) ?? .none)
                    let row = OutboxRow(
                        seq: 1, app: draft.app, identityKey: draft.identityKey, kind: draft.kind,
                        priority: draft.priority, pulseBatchID: draft.pulseBatchID, payload: stored.bytes,
                        compression: stored.compression.rawValue, recordCount: draft.recordCount,
                        fallback: draft.fallback, httpBatchID: testCase.batchID, attempts: 0, nextAttemptAt: 0,
                        createdAt: 0, plainCount: stored.plainCount)
                    for converted in CrashFallback.eventDrafts(for: row, connectPayload: draft.identity) {
                        out += "converted \(converted.pulseBatchID) \(OTLP.text(converted.payload))\n"
                    }
                }
            }
            let response = GatewayIntake.success(
                signal: testCase.signal, rejected: mapped.rejected, message: mapped.rejectionMessage(testCase.signal),
                format: .json)
            out += "response \(OTLP.text(response.body))\n"
            if let record = mapped.diagnostics?.record { out += "diagnostics \(OTLP.text(record))\n" }
        } catch let rejection {
            out += "rejected \(rejection.status.code) \(rejection.message)\n"
            out += "response \(OTLP.text(GatewayIntake.errorResponse(rejection).body))\n"
        }
        return out
    }

    // MARK: Intake answers and the log line

    @Test func intakeAnswersMatchTheGoldenBytes() throws {
        var out = ""
        for signal in [OTLPSignal.logs, .traces, .metrics] {
            for rejected in [0, 3] {
                let response = GatewayIntake.success(
                    signal: signal, rejected: rejected, message: rejected > 0 ? "3 dropped \"x\"" : nil,
                    format: .json)
                out += "\(signal) \(rejected) \(OTLP.text(response.body))\n"
            }
        }
        for status in [HTTPStatus.badRequest, .unauthorized, .tooManyRequests, .serviceUnavailable] {
            let response = GatewayIntake.errorResponse(IntakeRejection(status, "bad\n\"thing\"\u{1}"))
            out += "\(status.code) \(OTLP.text(response.body))\n"
        }
        try Self.check("intake-answers", out)
    }

    @Test func logLinesMatchTheGoldenBytes() throws {
        let lines = Mutex<[String]>([])
        let logger = GatewayLogger(
            level: .debug, clock: { 1_700_000_000_123 }, sink: { line in lines.withLock { $0.append(line) } })
        logger.info("started", ["port": "4318", "data": "/var/lib/pulsegate"])
        logger.warning("odd \"value\"\n\u{7}", ["key\twith tab": "é😀\u{2028}"])
        logger.error("no fields")
        logger.debug("debug", ["empty": ""])
        try Self.check("log-lines", lines.withLock { $0.joined() })
    }

    // MARK: Golden files

    static func check(_ name: String, _ actual: String) throws {
        let path = testsDirectory.appendingPathComponent("Golden/\(name).txt").path
        if ProcessInfo.processInfo.environment["PULSEGATE_REGENERATE_GOLDEN"] == "1" {
            try Data(actual.utf8).write(to: URL(fileURLWithPath: path))
            return
        }
        let expected = try #require(FileManager.default.contents(atPath: path), "missing golden file \(path)")
        let expectedText = String(decoding: expected, as: UTF8.self)
        if expectedText != actual {
            let expectedLines = expectedText.split(separator: "\n", omittingEmptySubsequences: false)
            let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
            let first =
                zip(expectedLines, actualLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(expectedLines.count, actualLines.count)
            let shown = { (lines: [Substring]) in first < lines.count ? String(lines[first].prefix(600)) : "<end>" }
            Issue.record(
                "\(name): line \(first + 1) differs\nexpected: \(shown(expectedLines))\nactual:   \(shown(actualLines))"
            )
        }
    }
}
