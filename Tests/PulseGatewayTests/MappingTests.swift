import MsgTrans
import OTLPProtobuf
import PulseHTTP
import PulseHashing
import PulseJSON
import Testing

@testable import PulseGateway

@Suite struct MappingTests {
    static let threeRecords = OTLP.logs(records: [
        OTLP.record(
            1_700_000_000, attributes: [OTLP.string("log.record.uid", "uid-1"), OTLP.string("session.id", "s-1")],
            extra: #","severityNumber":9,"severityText":"INFO","body":{"stringValue":"cart opened"}"#),
        OTLP.record(
            1_700_000_001,
            attributes: [
                OTLP.string("http.request.header.authorization", "Bearer abc"),
                OTLP.string("url.full", "https://api.example.com/v1/pay?token=abc#frag"),
                OTLP.string("url.query", "token=abc"), OTLP.int("retry", 2),
            ], extra: #","severityNumber":17,"body":{"stringValue":"payment failed"}"#),
        OTLP.record(
            1_700_000_002,
            attributes: [
                OTLP.string("log.record.uid", "uid-3"), #"{"key":"amount","value":{"doubleValue":12.5}}"#,
                #"{"key":"ok","value":{"boolValue":true}}"#,
            ], extra: #","eventName":"checkout.completed""#),
    ])

    @Test func logsBecomeOneEventBatchWithExactJSON() throws {
        let mapped = try OTLP.map(Self.threeRecords, signal: .logs)
        #expect(mapped.records == 3)
        #expect(mapped.rejected == 0)
        try #require(mapped.drafts.count == 1)
        let draft = mapped.drafts[0]
        let derived = OTLP.fieldHash(["shop", "b-1", "0", "0", "1"])
        let batchID = String(OTLP.fieldHash(["shop", "b-1", "0", "0"]).prefix(32))
        let expected =
            #"{"identity":\#(OTLP.iosIdentity),"events":["#
            + #"{"id":"uid-1","timestamp":1700000000000,"sessionId":"s-1","kind":"Log","name":"log","source":{"module":"ShopKit","imageUuid":null},"attributes":{"log.record.uid":"uid-1","session.id":"s-1","log.body":"cart opened","log.severity_number":9,"log.severity_text":"INFO","otlp.signal":"logs"}},"#
            + #"{"id":"\#(derived)","timestamp":1700000001000,"sessionId":"","kind":"Error","name":"log","source":{"module":"ShopKit","imageUuid":null},"attributes":{"http.request.header.authorization":"[REDACTED]","url.full":"https://api.example.com/v1/pay","retry":2,"log.body":"payment failed","log.severity_number":17,"otlp.signal":"logs"}},"#
            + #"{"id":"uid-3","timestamp":1700000002000,"sessionId":"","kind":"Analytics","name":"checkout.completed","source":{"module":"ShopKit","imageUuid":null},"attributes":{"log.record.uid":"uid-3","amount":12.5,"ok":true,"otlp.signal":"logs"}}"#
            + #"],"batchId":"\#(batchID)"}"#
        #expect(OTLP.text(draft.payload) == expected)
        #expect(draft.pulseBatchID == batchID)
        #expect(draft.kind == .events)
        #expect(draft.recordCount == 3)
        #expect(draft.app == "shop")
        #expect(draft.payload.count >= 1024)
        #expect(draft.compression == 1)  // zstd from 1,024 bytes on
        #expect(draft.fallback == nil)
        // The CONNECT payload binds the same identity.
        #expect(
            OTLP.text(draft.identity)
                == #"{"protocolVersion":2,"appId":"shop","deviceId":"dev-1","installationId":"inst-1","platform":"ios","deviceType":"unknown","packageName":"com.example.shop","appVersion":"2.4.1","buildNumber":241,"sdkVersion":"pulsekit/2.3.0","capabilities":["batch_upload","crash_upload","compression:zstd"]}"#
        )
        #expect(draft.identityKey == String(SHA256.hexDigest(draft.identity).prefix(32)))
        // The payload is valid JSON.
        _ = try JSONParser().parse(draft.payload)
    }

    @Test func replayIsByteIdenticalAndOtherBatchIDsDiffer() throws {
        let first = try OTLP.map(Self.threeRecords, signal: .logs)
        let again = try OTLP.map(Self.threeRecords, signal: .logs)
        #expect(first == again)
        let other = try OTLP.map(Self.threeRecords, signal: .logs, batchID: "b-2")
        #expect(other.drafts[0].pulseBatchID != first.drafts[0].pulseBatchID)
        // Ids from log.record.uid do not depend on the batch; derived ones do.
        #expect(OTLP.text(other.drafts[0].payload).contains(#""id":"uid-1""#))
        #expect(!OTLP.text(other.drafts[0].payload).contains(OTLP.fieldHash(["shop", "b-1", "0", "0", "1"])))
    }

    @Test(arguments: [
        (
            #""attributes":[{"key":"event.name","value":{"stringValue":"breadcrumb.tap"}}]"#, "Breadcrumb",
            "breadcrumb.tap"
        ),
        (
            #""attributes":[{"key":"event.name","value":{"stringValue":"pulsegate.diagnostics"}}]"#, "Runtime",
            "pulsegate.diagnostics"
        ),
        (#""attributes":[{"key":"event.name","value":{"stringValue":"device.crash"}}]"#, "Crash", "device.crash"),
        (#""attributes":[{"key":"exception.type","value":{"stringValue":"IOError"}}]"#, "Error", "log"),
        (#""attributes":[],"severityNumber":21"#, "Error", "log"),
        (#""attributes":[],"severityNumber":13"#, "Log", "log"),
        (
            #""attributes":[{"key":"apsio.event.kind","value":{"stringValue":"Performance"}}],"eventName":"x""#,
            "Performance", "x"
        ),
    ])
    func logKinds(fields: String, kind: String, name: String) throws {
        let json = OTLP.logs(records: [#"{"timeUnixNano":"1700000000000000000",\#(fields)}"#])
        let payload = OTLP.text(try OTLP.map(json, signal: .logs).drafts[0].payload)
        #expect(payload.contains(#""kind":"\#(kind)","name":"\#(name)""#), "\(payload)")
    }

    @Test func unknownKindOverrideRejectsTheRequest() {
        let json = OTLP.logs(records: [OTLP.record(1, attributes: [OTLP.string("apsio.event.kind", "network")])])
        let error = #expect(throws: IntakeRejection.self) { try OTLP.map(json, signal: .logs) }
        #expect(error?.status == .badRequest)
        #expect(error?.message.contains("apsio.event.kind") == true)
    }

    @Test func missingPlatformNamesTheFieldAndWhereItWasLooked() {
        let resource = OTLP.iosResource.filter { !$0.contains("os.") }
        let json = OTLP.logs(resource: resource, records: [OTLP.record(1)])
        let error = #expect(throws: IntakeRejection.self) {
            try OTLP.map(json, signal: .logs, fallbacks: OTLP.refusing)
        }
        #expect(
            error?.message
                == "resource 0: missing platform (resource attribute os.name, os.type or telemetry.sdk.language, "
                + "header Apsio-Platform, or appIdentity platform)")
        // The header fallback fills it.
        var header = OTLP.refusing
        header.platform = "android"
        let mapped = try? OTLP.map(json, signal: .logs, fallbacks: header)
        #expect(mapped.map { OTLP.text($0.drafts[0].payload).contains(#""platform":"android""#) } == true)
    }

    @Test func deviceAndInstallationFallBackToEachOther() throws {
        let resource = OTLP.iosResource.filter { !$0.contains("device.id") && !$0.contains("installation") }
        let json = OTLP.logs(resource: resource, records: [OTLP.record(1)])
        let missing = #expect(throws: IntakeRejection.self) {
            try OTLP.map(json, signal: .logs, fallbacks: OTLP.refusing)
        }
        #expect(missing?.message.hasPrefix("resource 0: missing deviceId and installationId") == true)
        let mapped = try OTLP.map(json, signal: .logs, fallbacks: IdentityFallbacks(installationID: "i-9"))
        #expect(OTLP.text(mapped.drafts[0].payload).contains(#""installationId":"i-9","deviceId":"i-9""#))
    }

    @Test func crashRecordsGoToACrashBatchFirstWithAFallback() throws {
        let json = OTLP.logs(records: OTLP.crash42Records())
        let mapped = try OTLP.map(json, signal: .logs)
        try #require(mapped.drafts.count == 2)
        let crash = mapped.drafts[0]
        #expect(crash.kind == .crashes)
        #expect(crash.priority == 0)
        let crashBatchID = String(OTLP.fieldHash(["shop", "b-1", "0", "0", "crash"]).prefix(32))
        let attributes =
            #"{"app.crash.id":"crash-42","exception.type":"EXC_BAD_ACCESS","exception.message":"bad pointer","exception.stacktrace":"0 Shop","app.crash.signal":"SIGSEGV","otlp.signal":"logs"}"#
        #expect(
            OTLP.text(crash.payload)
                == #"{"identity":\#(OTLP.iosIdentity),"crashes":[{"crashId":"crash-42","timestamp":1700000003000,"sessionId":null,"signal":"SIGSEGV","exceptionType":"EXC_BAD_ACCESS","message":"bad pointer","stack":"0 Shop","build":{"appVersion":"2.4.1","buildNumber":241,"imageUuids":[],"osVersion":null,"architecture":null},"attachments":[],"attributes":\#(attributes)}],"batchId":"\#(crashBatchID)"}"#
        )
        let fallback = try #require(crash.fallback.flatMap(EventChunks.split))
        let crashEventID = "crash-" + SHA256.hexDigest(Array("crash-42".utf8))
        #expect(
            fallback.map(OTLP.text) == [
                #"{"id":"\#(crashEventID)","timestamp":1700000003000,"sessionId":"","kind":"Crash","name":"crash","source":{"module":"ShopKit","imageUuid":null},"attributes":\#(attributes)}"#
            ])
        #expect(mapped.drafts[1].kind == .events)
        #expect(mapped.drafts[1].recordCount == 1)
        // The fallback rows built on a 501 carry the crash as an event with the crash's identity.
        let stored = StoredPayload(encoding: crash.payload, compression: .zstd)
        let row = OutboxRow(
            seq: 1, app: "shop", identityKey: crash.identityKey, kind: .crashes, priority: 0,
            pulseBatchID: crash.pulseBatchID, payload: stored.bytes, compression: stored.compression.rawValue,
            recordCount: 1, fallback: crash.fallback, httpBatchID: "b-1", attempts: 0, nextAttemptAt: 0, createdAt: 0,
            plainCount: stored.plainCount)
        let converted = CrashFallback.eventDrafts(for: row, connectPayload: crash.identity)
        try #require(converted.count == 1)
        #expect(converted[0].identity == crash.identity)
        #expect(
            OTLP.text(converted[0].payload).hasPrefix(
                #"{"identity":\#(OTLP.iosIdentity),"events":[{"id":"\#(crashEventID)""#))
    }

    @Test func spansMapToNetworkOrPerformanceWithTraceIDs() throws {
        let json = OTLP.spans(spans: [
            #"{"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174","name":"GET /items","kind":3,"startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000250000000","status":{"code":1},"attributes":[{"key":"http.url","value":{"stringValue":"https://h/items?x=1"}}]}"#,
            #"{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b175","name":"render","kind":1,"startTimeUnixNano":"1700000001000000000","endTimeUnixNano":"1700000001100000000","attributes":[]}"#,
            #"{"traceId":"","spanId":"","name":"","startTimeUnixNano":"1700000002000000000"}"#,
        ])
        let mapped = try OTLP.map(json, signal: .traces)
        let payload = OTLP.text(mapped.drafts[0].payload)
        #expect(
            payload.contains(
                #"{"id":"5b8efff798038103d269b633813fc60ceee19b7ec3c1b174","timestamp":1700000000000,"sessionId":"","kind":"Network","name":"GET /items","source":{"module":"net","imageUuid":null},"attributes":{"http.url":"https://h/items","trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b174","span.kind":3,"span.end_time_ms":1700000000250,"span.status_code":1,"otlp.signal":"traces"}}"#
            ), "\(payload)")
        #expect(
            payload.contains(
                #""id":"5b8efff798038103d269b633813fc60ceee19b7ec3c1b175","timestamp":1700000001000,"sessionId":"","kind":"Performance","name":"render""#
            ))
        #expect(
            payload.contains(
                #""id":"\#(OTLP.fieldHash(["shop", "b-1", "0", "0", "2"]))","timestamp":1700000002000,"sessionId":"","kind":"Performance","name":"span""#
            ))
    }

    @Test func defaultSpanKindAndStatusCodeMapLikeOmittedOnes() throws {
        // The companion uploader writes `"status":{"code":0}`; protobuf never carries a zero, so
        // an OTLP/JSON default must not add attributes that the protobuf form lacks.
        let explicit = OTLP.spans(spans: [
            #"{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"render","kind":0,"startTimeUnixNano":"1700000000000000000","status":{"code":0}}"#
        ])
        let omitted = OTLP.spans(spans: [
            #"{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"render","startTimeUnixNano":"1700000000000000000","status":{}}"#
        ])
        let explicitPayload = OTLP.text(try OTLP.map(explicit, signal: .traces).drafts[0].payload)
        let omittedPayload = OTLP.text(try OTLP.map(omitted, signal: .traces).drafts[0].payload)
        #expect(explicitPayload == omittedPayload)
        #expect(!explicitPayload.contains("span.kind"))
        #expect(!explicitPayload.contains("span.status_code"))
    }

    @Test func metricPointsGetSeriesIDsAndRuntimeKinds() throws {
        let json = OTLP.metrics(metrics: [
            #"{"name":"process.runtime.jvm.memory","unit":"By","gauge":{"dataPoints":[{"timeUnixNano":"1700000000000000000","asInt":"1024","attributes":[{"key":"pool","value":{"stringValue":"heap"}}]}]}}"#,
            #"{"name":"app.frame_time","unit":"ms","histogram":{"dataPoints":[{"startTimeUnixNano":"1699999990000000000","timeUnixNano":"1700000000000000000","count":"3","sum":30.5,"bucketCounts":["1","2"],"explicitBounds":[16.0]}]}}"#,
        ])
        let mapped = try OTLP.map(json, signal: .metrics)
        #expect(mapped.records == 2)
        let payload = OTLP.text(mapped.drafts[0].payload)
        #expect(
            payload.contains(
                #""kind":"Runtime","name":"process.runtime.jvm.memory","source":{"module":"perf","imageUuid":null},"attributes":{"pool":"heap","metric.type":"gauge","metric.unit":"By","metric.value":1024,"otlp.signal":"metrics"}}"#
            ), "\(payload)")
        #expect(
            payload.contains(
                #""timestamp":1700000000000,"sessionId":"","kind":"Performance","name":"app.frame_time","source":{"module":"perf","imageUuid":null},"attributes":{"metric.type":"histogram","metric.unit":"ms","metric.count":3,"metric.sum":30.5,"metric.bucket_counts":[1,2],"metric.explicit_bounds":[16.0],"otlp.signal":"metrics"}}"#
            ))
        // Same series and times in another batch: same id (the series identity, not the batch, names it).
        let other = try OTLP.map(json, signal: .metrics, batchID: "other")
        let ids = { (text: String) in text.split(separator: "\"id\":\"").dropFirst().map { $0.prefix(64) } }
        #expect(ids(payload) == ids(OTLP.text(other.drafts[0].payload)))
    }

    @Test func clockOffsetIsAppliedOnlyBeyondFiveMinutes() throws {
        let json = OTLP.logs(records: [OTLP.record(1_700_000_000)])
        let small = try OTLP.map(json, signal: .logs, receivedAt: 1_700_000_100_000, sentAt: 1_700_000_000_000)
        #expect(OTLP.text(small.drafts[0].payload).contains(#""timestamp":1700000000000"#))
        #expect(!OTLP.text(small.drafts[0].payload).contains("clock_offset"))
        // The device clock runs 10 minutes behind: its times move forward by the offset.
        let skewed = try OTLP.map(json, signal: .logs, receivedAt: 1_700_000_600_000, sentAt: 1_700_000_000_000)
        let text = OTLP.text(skewed.drafts[0].payload)
        #expect(text.contains(#""timestamp":1700000600000"#))
        #expect(text.contains(#""pulsegate.clock_offset_ms":600000,"pulsegate.device_time_ms":1700000000000"#))
    }

    @Test func batchesSplitAtSixtyFourEventsInOrder() throws {
        // 130 records with log.record.uid u-0 … u-129.
        let mapped = try OTLP.map(GoldenOutputTests.splitByCount, signal: .logs)
        #expect(mapped.drafts.map(\.recordCount) == [64, 64, 2])
        #expect(mapped.drafts.allSatisfy { $0.payload.count <= 65_536 })
        #expect(Set(mapped.drafts.map(\.pulseBatchID)).count == 3)
        #expect(
            mapped.drafts.map(\.pulseBatchID)
                == (0..<3).map { String(OTLP.fieldHash(["shop", "b-1", "0", String($0)]).prefix(32)) })
        let order = mapped.drafts.flatMap { draft in
            OTLP.text(draft.payload).split(separator: "\"id\":\"u-").dropFirst().map { Int($0.prefix { $0 != "\"" })! }
        }
        #expect(order == Array(0..<130))
        #expect(mapped.drafts.map(\.compression) == [1, 1, mapped.drafts[2].payload.count >= 1024 ? 1 : 0])
    }

    @Test func batchesSplitByBytesAndDropOversizedEvents() throws {
        // Five records of 20,000 bytes with one of 70,000 bytes (uid "huge") third.
        let mapped = try OTLP.map(GoldenOutputTests.splitByBytes, signal: .logs)
        #expect(mapped.records == 6)
        #expect(mapped.rejected == 1)
        #expect(mapped.rejectionMessage(.logs)?.hasPrefix("1 log record dropped") == true)
        #expect(mapped.drafts.map(\.recordCount) == [2, 3])
        #expect(mapped.drafts.allSatisfy { $0.payload.count <= 65_536 })
        #expect(!mapped.drafts.contains { OTLP.text($0.payload).contains("\"huge\"") })
    }

    @Test func resourcesWithoutRecordsNeedNoIdentityAndEmptyRequestsMapToNothing() throws {
        let empty = try OTLP.map(#"{"resourceLogs":[{"resource":{},"scopeLogs":[]}]}"#, signal: .logs)
        #expect(empty.drafts.isEmpty)
        #expect(try OTLP.map("{}", signal: .logs).drafts.isEmpty)
        let wrong = #expect(throws: IntakeRejection.self) { try OTLP.map("[]", signal: .logs) }
        #expect(wrong?.status == .badRequest)
        let notArray = #expect(throws: IntakeRejection.self) { try OTLP.map(#"{"resourceLogs":{}}"#, signal: .logs) }
        #expect(notArray?.message == "resourceLogs must be an array")
    }

    @Test func nestedValuesAreFlattenedAndRedactedAtEveryLevel() throws {
        let attribute =
            #"{"key":"ctx","value":{"kvlistValue":{"values":[{"key":"user","value":{"stringValue":"u"}},{"key":"apiKey","value":{"stringValue":"k"}},{"key":"tags","value":{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":3},{"bytesValue":"AAE="}]}}}]}}}"#
        let json = OTLP.logs(records: [
            OTLP.record(1, attributes: [attribute, OTLP.string("Set-Cookie", "x"), OTLP.string("db.password", "p")])
        ])
        let text = OTLP.text(try OTLP.map(json, signal: .logs).drafts[0].payload)
        #expect(
            text.contains(
                #""ctx":{"user":"u","apiKey":"[REDACTED]","tags":["a",3,"AAE="]},"Set-Cookie":"[REDACTED]","db.password":"[REDACTED]""#
            ), "\(text)")
    }
}
