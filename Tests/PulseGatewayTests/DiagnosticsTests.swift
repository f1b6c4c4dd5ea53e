import Foundation
import OTLPProtobuf
import PulseJSON
import PulseTestSupport
import Testing

@testable import PulseGateway

/// Issue 6, gateway side: diagnostics records and batch sequence numbers at intake, the gap rule and
/// `GET /v1/diagnostics` (real gateway, port 0, injected clock).
@Suite struct DiagnosticsTests {
    /// A diagnostics log record as the uploader writes it.
    static func diagnosticsRecord(sequence: Int, attempted: Int, sentOK: Int, withErrors: Int) -> String {
        OTLP.record(
            1_700_000_000,
            attributes: [
                OTLP.string("event.name", "pulsegate.diagnostics"), OTLP.string("apsio.event.kind", "Runtime"),
                OTLP.int("pulsegate.batch.sequence", sequence),
                OTLP.int("pulsegate.diagnostics.batches_attempted", attempted),
                OTLP.int("pulsegate.diagnostics.batches_sent_ok", sentOK),
                OTLP.int("pulsegate.diagnostics.batches_with_errors", withErrors),
                #"{"key":"pulsegate.diagnostics.error_history","value":{"arrayValue":{"values":[{"kvlistValue":{"values":[\#(OTLP.int("code", 503)),\#(OTLP.string("domain", "http"))]}}]}}}"#,
            ], extra: #","eventName":"pulsegate.diagnostics""#)
    }

    /// A logs batch with one ordinary event and (optionally) a diagnostics record.
    static func batch(sequence: Int, attempted: Int = 0, record: Bool = true, installation: String = "inst-1")
        -> String
    {
        var resource = OTLP.iosResource
        resource[1] = OTLP.string("app.installation.id", installation)
        var records = [
            OTLP.record(1_700_000_000, attributes: [OTLP.string("log.record.uid", "uid-\(installation)-\(sequence)")])
        ]
        if record {
            records.append(
                diagnosticsRecord(
                    sequence: sequence, attempted: attempted, sentOK: max(0, attempted - 1),
                    withErrors: attempted > 0 ? 1 : 0))
        }
        return OTLP.logs(resource: resource, records: records)
    }

    func send(_ harness: GatewayHarness, sequence: Int, attempted: Int = 0, batchID: String? = nil) async throws {
        let response = try await harness.post(
            Self.batch(sequence: sequence, attempted: attempted), batchID: batchID ?? "batch-\(sequence)",
            extraHeaders: [("Apsio-Batch-Sequence", String(sequence))])
        #expect(response.status == 200, "\(response.bodyText)")
    }

    func diagnostics(_ harness: GatewayHarness, app: String = "shop") async throws -> JSONDocument {
        let response = try await harness.request("GET", "/v1/diagnostics?app=\(app)", headers: [])
        #expect(response.status == 200, "\(response.bodyText)")
        #expect(response.header("Content-Type") == "application/json")
        return try JSONParser().parse(response.body)
    }

    @Test func aWithheldBatchIsAGapOnlyAfterTheGracePeriod() async throws {
        let harness = try await GatewayHarness.start()
        for sequence in [1, 2, 5] {
            try await send(harness, sequence: sequence, attempted: sequence)
        }
        var document = try await diagnostics(harness)
        #expect(document.root["app"]?.string == "shop")
        #expect(document.root["gapGraceSeconds"]?.int64 == 300)
        #expect(document.root["generatedAtMs"]?.int64 == harness.clock.wallClockMilliseconds)
        #expect(document.root["devicesWithGaps"]?.int64 == 0)
        var device = try #require(document.root["devices"]?[0])
        #expect(device["installationId"]?.string == "inst-1")
        #expect(device["deviceId"]?.string == "dev-1")
        #expect(device["batchesReceived"]?.int64 == 3)
        #expect(device["highestSequence"]?.int64 == 5)
        #expect(device["missingTotal"]?.int64 == 0)
        #expect(device["pendingRanges"]?[0]?["from"]?.int64 == 3)
        #expect(device["pendingRanges"]?[0]?["to"]?.int64 == 4)

        harness.clock.advance(milliseconds: 299_999)
        #expect(try await diagnostics(harness).root["missingTotal"]?.int64 == 0)
        harness.clock.advance(milliseconds: 1)
        document = try await diagnostics(harness)
        #expect(document.root["devicesWithGaps"]?.int64 == 1)
        #expect(document.root["missingTotal"]?.int64 == 2)
        device = try #require(document.root["devices"]?[0])
        #expect(device["missingRanges"]?[0]?["from"]?.int64 == 3)
        #expect(device["missingRanges"]?[0]?["to"]?.int64 == 4)
        #expect(device["attempted"]?.int64 == 5)
        #expect(device["sentOk"]?.int64 == 4)
        #expect(device["sentWithErrors"]?.int64 == 1)
        #expect(device["firstSeenMs"]?.int64 == device["lastSeenMs"]?.int64)

        let metrics = try await harness.request("GET", "/metrics", headers: [])
        #expect(metrics.bodyText.contains("pulsegate_diagnostics_devices{app=\"shop\"} 1\n"))
        #expect(metrics.bodyText.contains("pulsegate_diagnostics_devices_with_gaps{app=\"shop\"} 1\n"))
        #expect(metrics.bodyText.contains("pulsegate_diagnostics_missing_batches{app=\"shop\"} 2\n"))

        // A late arrival closes its part of the gap.
        try await send(harness, sequence: 3, attempted: 3)
        device = try #require(try await diagnostics(harness).root["devices"]?[0])
        #expect(device["missingRanges"]?[0]?["from"]?.int64 == 4)
        #expect(device["missingTotal"]?.int64 == 1)
        #expect(device["batchesReceived"]?.int64 == 4)
        // The latest record is still the one of the highest sequence number.
        #expect(device["attempted"]?.int64 == 5)
        #expect(device["latest"]?["pulsegate.batch.sequence"]?.int64 == 5)
        #expect(device["latest"]?["pulsegate.diagnostics.error_history"]?[0]?["code"]?.int64 == 503)
        await harness.stop()
    }

    @Test func outOfOrderDeliveryWithinTheGracePeriodIsNoGap() async throws {
        let harness = try await GatewayHarness.start()
        for sequence in [1, 3, 4] {
            try await send(harness, sequence: sequence, attempted: sequence)
        }
        harness.clock.advance(milliseconds: 120_000)
        try await send(harness, sequence: 2, attempted: 2)
        harness.clock.advance(milliseconds: 3_600_000)
        let document = try await diagnostics(harness)
        #expect(document.root["missingTotal"]?.int64 == 0)
        let device = try #require(document.root["devices"]?[0])
        #expect(device["batchesReceived"]?.int64 == 4)
        #expect(device["highestSequence"]?.int64 == 4)
        #expect(device["missingRanges"]?.elements.map { _ in 1 }.count == 0)
        #expect(device["pendingRanges"]?.elements.map { _ in 1 }.count == 0)
        #expect(device["attempted"]?.int64 == 4)
        await harness.stop()
    }

    @Test func duplicatesDoNotCountTwice() async throws {
        let harness = try await GatewayHarness.start()
        try await send(harness, sequence: 1, attempted: 1)
        // The same batch again (a retry after a lost answer): a dedup hit, nothing counted.
        let again = try await harness.post(
            Self.batch(sequence: 1, attempted: 1), batchID: "batch-1",
            extraHeaders: [("Apsio-Batch-Sequence", "1")])
        #expect(again.header("Apsio-Duplicate") == "true")
        // The same sequence number under another batch id is not a new batch either.
        try await send(harness, sequence: 1, attempted: 1, batchID: "other-id")
        let device = try #require(try await diagnostics(harness).root["devices"]?[0])
        #expect(device["batchesReceived"]?.int64 == 1)
        #expect(device["highestSequence"]?.int64 == 1)
        await harness.stop()
    }

    @Test func theSequenceHeaderAloneIsTrackedAndEveryFormOfTheRecordIsRecognised() async throws {
        let harness = try await GatewayHarness.start()
        // A batch sealed at level `none`: no record, only the header.
        var response = try await harness.post(
            Self.batch(sequence: 1, record: false), batchID: "b1", extraHeaders: [("Apsio-Batch-Sequence", "1")])
        #expect(response.status == 200)
        var device = try #require(try await diagnostics(harness).root["devices"]?[0])
        #expect(device["batchesReceived"]?.int64 == 1)
        #expect(device["latest"]?.isNull == true)
        #expect(device["attempted"]?.isNull == true)

        // A traces batch: the record is a span; the sequence comes from its attribute (no header).
        let attributes = [
            OTLP.string("apsio.event.kind", "Runtime"), OTLP.int("pulsegate.batch.sequence", 2),
            OTLP.int("pulsegate.diagnostics.batches_attempted", 7),
        ].joined(separator: ",")
        let span =
            #"{"traceId":"0123456789abcdef0123456789abcdef","spanId":"0123456789abcdef","name":"pulsegate.diagnostics","kind":1,"startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000000000000","attributes":[\#(attributes)]}"#
        response = try await harness.post(OTLP.spans(spans: [span]), path: "/v1/traces", batchID: "b2")
        #expect(response.status == 200, "\(response.bodyText)")
        // A metrics batch: a gauge named pulsegate.diagnostics.
        let metricAttributes = attributes.replacingOccurrences(of: #""intValue":"2""#, with: #""intValue":"3""#)
        let metric =
            #"{"name":"pulsegate.diagnostics","gauge":{"dataPoints":[{"timeUnixNano":"1700000000000000000","asInt":"3","attributes":[\#(metricAttributes)]}]}}"#
        response = try await harness.post(
            OTLP.metrics(metrics: [metric]), path: "/v1/metrics", batchID: "b3",
            extraHeaders: [("Apsio-Batch-Sequence", "3")])
        #expect(response.status == 200, "\(response.bodyText)")
        device = try #require(try await diagnostics(harness).root["devices"]?[0])
        #expect(device["batchesReceived"]?.int64 == 3)
        #expect(device["highestSequence"]?.int64 == 3)
        #expect(device["latest"]?["pulsegate.batch.sequence"]?.int64 == 3)
        #expect(device["attempted"]?.int64 == 7)
        await harness.stop()
    }

    @Test func aProtobufBatchIsRecordedLikeJSON() async throws {
        let harness = try await GatewayHarness.start()
        let body = Protobuf.logsRequest(
            resource: [("device.id", .string("dev-pb")), ("app.installation.id", .string("inst-pb"))]
                + [("telemetry.sdk.name", .string("pulsekit")), ("os.name", .string("iOS"))],
            eventName: "pulsegate.diagnostics",
            attributes: [
                ("apsio.event.kind", .string("Runtime")), ("pulsegate.batch.sequence", .int(2)),
                ("pulsegate.diagnostics.batches_attempted", .int(11)),
            ])
        let response = try await harness.request(
            "POST", "/v1/logs", body: body,
            headers: [
                ("Content-Type", "application/x-protobuf"), ("Apsio-App-Id", "shop"), ("Apsio-Batch-Id", "pb-1"),
                ("Apsio-Batch-Sequence", "2"),
            ])
        #expect(response.status == 200)
        let device = try #require(try await diagnostics(harness).root["devices"]?[0])
        #expect(device["installationId"]?.string == "inst-pb")
        #expect(device["highestSequence"]?.int64 == 2)
        #expect(device["attempted"]?.int64 == 11)
        #expect(device["pendingRanges"]?[0]?["from"]?.int64 == 1)
        await harness.stop()
    }

    @Test func theRecordTravelsUpstreamAsARuntimeEvent() throws {
        let mapped = try OTLP.map(Self.batch(sequence: 4, attempted: 9), signal: .logs)
        let payload = try JSONParser().parse(try #require(mapped.drafts.first).payload)
        let events = Array(try #require(payload.root["events"]).elements)
        let record = try #require(events.first { $0["name"]?.string == "pulsegate.diagnostics" })
        #expect(record["kind"]?.string == "Runtime")
        #expect(record["attributes"]?["pulsegate.batch.sequence"]?.int64 == 4)
        #expect(record["attributes"]?["pulsegate.diagnostics.batches_attempted"]?.int64 == 9)
    }

    @Test func sendersAreIdentifiedByTheIdentityRulesButNeverByADerivedIdentity() throws {
        func observe(_ resource: [String], fallbacks: IdentityFallbacks = IdentityFallbacks()) throws
            -> DiagnosticsObservation?
        {
            let json = OTLP.logs(resource: resource, records: [OTLP.record(1)])
            let context = MappingContext(
                appID: "shop", batchID: "b-1", receivedAt: 0, sentAt: nil, fallbacks: fallbacks, sequenceHeader: "4")
            return try OTLPMapper.map(
                try JSONParser().parse(Array(json.utf8)).root, signal: .logs, context: context
            ).diagnostics
        }
        // A stock SDK's process: service.instance.id, the installation of the batch identity too.
        let stock = try observe([OTLP.string("service.name", "checkout"), OTLP.string("service.instance.id", "i-7")])
        #expect(stock?.installationID == "i-7")
        #expect(stock?.deviceID == "i-7")
        #expect(stock?.sequence == 4)
        let host = try observe([OTLP.string("host.id", "h-1"), OTLP.string("app.installation.id", "a-1")])
        #expect(host?.installationID == "a-1")
        #expect(host?.deviceID == "h-1")
        #expect(try observe([], fallbacks: IdentityFallbacks(deviceID: "d-9"))?.installationID == "d-9")
        // A resource that names no sender gets a derived identity for its batches (shared by every
        // process of the service), but no diagnostics: their sequences would interleave as gaps.
        #expect(try observe([OTLP.string("service.name", "checkout")]) == nil)
    }

    @Test func theEndpointValidatesTheApp() async throws {
        var policy = GatewayPolicy()
        policy.allowedAppIDs = ["shop"]
        let harness = try await GatewayHarness.start(policy: policy)
        var response = try await harness.request("GET", "/v1/diagnostics", headers: [])
        #expect(response.status == 400)
        #expect(response.bodyText == #"{"code":3,"message":"query parameter app is required"}"#)
        response = try await harness.request("GET", "/v1/diagnostics?app=no%20spaces", headers: [])
        #expect(response.status == 400)
        response = try await harness.request("GET", "/v1/diagnostics?app=news", headers: [])
        #expect(response.status == 403)
        response = try await harness.request("POST", "/v1/diagnostics?app=shop", headers: [])
        #expect(response.status == 405)
        #expect(response.header("Allow") == "GET")
        let document = try await diagnostics(harness)
        #expect(document.root["devices"]?.elements.map { _ in 1 }.count == 0)
        #expect(document.root["devicesWithGaps"]?.int64 == 0)
        await harness.stop()
    }

    @Test func theGapRuleOnRanges() {
        typealias Range = DiagnosticsLedger.ReceivedRange
        let received = [
            Range(low: 2, high: 3, firstAt: 1_000), Range(low: 6, high: 6, firstAt: 500),
            Range(low: 9, high: 9, firstAt: 10_000),
        ]
        let gaps = DiagnosticsLedger.gaps(received, now: 10_500, graceMilliseconds: 1_000)
        // 1 (seen above since 500), 4-5 (since 500) are past the grace; 7-8 (seen above since 10,000) are not.
        #expect(gaps.missing == [.init(from: 1, to: 1), .init(from: 4, to: 5)])
        #expect(gaps.pending == [.init(from: 7, to: 8)])
    }
}

/// A minimal OTLP protobuf writer for one log record (field numbers from the OTLP logs proto).
enum Protobuf {
    enum Value {
        case string(String)
        case int(Int64)
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
        return bytes
    }

    static func field(_ number: UInt64, _ bytes: [UInt8]) -> [UInt8] {
        varint(number << 3 | 2) + varint(UInt64(bytes.count)) + bytes
    }

    static func keyValue(_ key: String, _ value: Value) -> [UInt8] {
        let any: [UInt8]
        switch value {
        case .string(let text): any = field(1, Array(text.utf8))
        case .int(let number): any = varint(3 << 3) + varint(UInt64(bitPattern: number))
        }
        return field(1, Array(key.utf8)) + field(2, any)
    }

    static func logsRequest(resource: [(String, Value)], eventName: String, attributes: [(String, Value)])
        -> [UInt8]
    {
        let resourceBytes = resource.flatMap { field(1, keyValue($0.0, $0.1)) }
        var record: [UInt8] = [0x09] + (0..<8).map { UInt8(truncatingIfNeeded: 1_700_000_000_000_000_000 >> ($0 * 8)) }
        record += attributes.flatMap { field(6, keyValue($0.0, $0.1)) }
        record += field(12, Array(eventName.utf8))
        let scopeLogs = field(2, record)
        let resourceLogs = field(1, resourceBytes) + field(2, scopeLogs)
        return field(1, resourceLogs)
    }
}
