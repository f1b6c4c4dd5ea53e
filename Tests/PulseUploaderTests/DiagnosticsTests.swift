import Foundation
import OTLPProtobuf
import PulseGateway
import PulseJSON
import PulseProtocol
import PulseTestSupport
import Testing

@testable import PulseUploader

/// Issue 6, uploader side: the diagnostics record, batch sequence numbers, counters and the call log, checked
/// against the fault-injecting server and the real gateway (in-process, port 0, injected clock).
@Suite(.serialized) struct DiagnosticsTests {
    /// A gateway on the fixture's clock, so the test moves time for both.
    func startGateway(clock: ManualClock) async throws -> (RunningGateway, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let configuration = GatewayConfiguration(
            dataDirectory: directory.path + "/gateway", listenPort: 0, shutdownGracePeriod: .seconds(2))
        let environment = GatewayEnvironment(clock: clock.clock)
        return (try await GatewayApp.start(configuration, environment: environment), directory)
    }

    /// `GET /v1/diagnostics?app=test-app`, parsed.
    func diagnostics(_ gateway: RunningGateway) async throws -> JSONDocument {
        let response = try await RawHTTPConnection.exchange(
            port: gateway.httpPort, target: "/v1/diagnostics?app=test-app")
        #expect(response.status == 200, "\(response.bodyText)")
        return try JSONParser().parse(response.body)
    }

    /// The diagnostics record's attributes in a stored or sent body, if it carries one.
    func diagnosticsAttributes(_ body: [UInt8], encoding: BodyEncoding, signal: Signal) throws -> JSONNode? {
        let document = try parseBody(body, encoding: encoding)
        let (resourceKey, scopeKey, itemsKey) =
            switch signal {
            case .logs: ("resourceLogs", "scopeLogs", "logRecords")
            case .traces: ("resourceSpans", "scopeSpans", "spans")
            case .metrics: ("resourceMetrics", "scopeMetrics", "metrics")
            }
        func elements(_ node: JSONNode?) -> [JSONNode] { node.map { Array($0.elements) } ?? [] }
        for resource in elements(document.root[resourceKey]) {
            for scope in elements(resource[scopeKey]) {
                for item in elements(scope[itemsKey]) {
                    let name = item["eventName"]?.string ?? item["name"]?.string
                    guard name == DiagnosticsRecord.eventName else { continue }
                    if signal == .metrics {
                        return elements(item["gauge"]?["dataPoints"]).first?["attributes"]
                    }
                    return item["attributes"]
                }
            }
        }
        return nil
    }

    func int(_ attributes: JSONNode?, _ key: String) -> Int64? {
        attribute(attributes, key)?["intValue"]?.string.flatMap { Int64($0) }
    }

    @Test func countersMatchWhatWasAttemptedAndWithheldBatchesBecomeAGap() async throws {
        let clock = ManualClock(UploaderClock.system.nowMilliseconds())
        let (gateway, gatewayDirectory) = try await startGateway(clock: clock)
        let faults = try FaultServer(script: [
            .respond(status: 503), .dropAfterRequest, .ok, .ok,
        ])
        var fixture = try UploaderFixture(clock: clock)

        // Phase 1: batches 1 and 2 go to the fault server (withheld from the gateway on purpose).
        fixture.endpoint = faults.baseURL
        var uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "one")))
        #expect(try await uploader.flush().retrying == 1)  // 503 without Retry-After
        clock.stepWallClock(by: 600_000)
        #expect(try await uploader.flush().retrying == 1)  // connection dropped after the request
        clock.stepWallClock(by: 600_000)
        #expect(try await uploader.flush().delivered == 1)
        try await uploader.record(.event(EventEntry(name: "two")))
        #expect(try await uploader.flush().delivered == 1)
        var status = try await uploader.status()
        #expect(faults.requests.count == 4)
        #expect(faults.requests.map { $0.headers["apsio-batch-sequence"] } == ["1", "1", "1", "2"])
        #expect(status.diagnostics.batchesAttempted == Int64(faults.requests.count))
        #expect(status.diagnostics.batchesSentSuccessfully == 2)
        #expect(status.diagnostics.batchesWithErrors == 2)
        #expect(status.diagnostics.totalErrors == 2)
        #expect(status.diagnostics.errorHistory.map(\.domain) == ["transport", "http"])
        #expect(status.diagnostics.errorHistory.map(\.code) == [0, 503])
        #expect(status.diagnostics.errorHistory.map(\.batchNumber) == [1, 1])
        #expect(status.diagnostics.lastSequence == 2)
        // Batch 2 was sealed after batch 1's three attempts: its record says so.
        let secondBody = try #require(faults.requests.last)
        let secondRecord = try diagnosticsAttributes(secondBody.body, encoding: .gzip, signal: .logs)
        #expect(int(secondRecord, "pulsegate.diagnostics.batches_attempted") == 3)
        #expect(int(secondRecord, "pulsegate.diagnostics.batches_with_errors") == 2)
        #expect(int(secondRecord, "pulsegate.batch.sequence") == 2)
        try await uploader.close()

        // Phase 2: the same queue (a restart) now delivers batches 3 and 4 to the real gateway.
        fixture.endpoint = "http://127.0.0.1:\(gateway.httpPort)"
        uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "three")))
        #expect(try await uploader.flush().delivered == 1)
        try await uploader.record(.event(EventEntry(name: "four")))
        #expect(try await uploader.flush().delivered == 1)
        status = try await uploader.status()
        #expect(status.diagnostics.batchesAttempted == 6)
        #expect(status.diagnostics.batchesSentSuccessfully == 4)
        #expect(status.diagnostics.lastSequence == 4)

        // Within the grace period, 1 and 2 are only pending.
        var document = try await diagnostics(gateway)
        var device = try #require(document.root["devices"]?[0])
        #expect(device["installationId"]?.string == uploader.identity.installationId)
        #expect(device["deviceId"]?.string == uploader.identity.deviceId)
        #expect(device["batchesReceived"]?.int64 == 2)
        #expect(device["highestSequence"]?.int64 == 4)
        #expect(device["missingTotal"]?.int64 == 0)
        #expect(device["pendingRanges"]?[0]?["from"]?.int64 == 1)
        #expect(device["pendingRanges"]?[0]?["to"]?.int64 == 2)
        // The latest record (batch 4) was sealed after 5 attempts: 4 to the fault server, 1 to the gateway.
        #expect(device["attempted"]?.int64 == Int64(faults.requests.count + 1))
        #expect(device["sentOk"]?.int64 == 3)
        #expect(device["sentWithErrors"]?.int64 == 2)
        #expect(device["latest"]?["pulsegate.batch.sequence"]?.int64 == 4)
        #expect(device["latest"]?["pulsegate.diagnostics.errors_total"]?.int64 == 2)
        #expect(device["latest"]?["pulsegate.diagnostics.error_history"]?[0]?["domain"]?.string == "transport")

        // After the grace period the withheld batches are a gap.
        clock.stepWallClock(by: 301_000)
        document = try await diagnostics(gateway)
        #expect(document.root["devicesWithGaps"]?.int64 == 1)
        #expect(document.root["missingTotal"]?.int64 == 2)
        device = try #require(document.root["devices"]?[0])
        #expect(device["missingRanges"]?[0]?["from"]?.int64 == 1)
        #expect(device["missingRanges"]?[0]?["to"]?.int64 == 2)
        #expect(device["missingTotal"]?.int64 == 2)

        try await uploader.close()
        faults.stop()
        await gateway.shutdown()
        withExtendedLifetime(gatewayDirectory) {}
    }

    @Test func everySignalCarriesTheRecordAndTheGatewayAcceptsIt() async throws {
        let clock = ManualClock(UploaderClock.system.nowMilliseconds())
        let (gateway, gatewayDirectory) = try await startGateway(clock: clock)
        var fixture = try UploaderFixture(clock: clock)
        fixture.endpoint = "http://127.0.0.1:\(gateway.httpPort)"
        let uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "checkout")))
        try await uploader.record(.span(SpanEntry(name: "GET /items", kind: .client)))
        try await uploader.record(.metric(MetricPoint(name: "requests", value: .int(5))))
        try await uploader.seal(.flush)
        let batches = try await uploader.storedBatches()
        #expect(batches.count == 3)
        #expect(Set(batches.compactMap(\.sequence)) == [1, 2, 3])
        for batch in batches {
            let attributes = try diagnosticsAttributes(batch.body, encoding: batch.encoding, signal: batch.signal)
            #expect(attributes != nil, "no record in the \(batch.signal) batch")
            #expect(int(attributes, "pulsegate.batch.sequence") == batch.sequence)
            #expect(attribute(attributes, "apsio.event.kind")?["stringValue"]?.string == "Runtime")
            #expect(attribute(attributes, "pulsegate.diagnostics.level")?["stringValue"]?.string == "batchSummaries")
            #expect(int(attributes, "pulsegate.diagnostics.drops.kill_switch") == 0)
        }
        let report = try await uploader.flush()
        #expect(report.delivered == 3)
        #expect(report.rejected == 0)
        #expect(report.partiallyRejectedRecords == 0)
        let device = try #require(try await diagnostics(gateway).root["devices"]?[0])
        #expect(device["batchesReceived"]?.int64 == 3)
        #expect(device["highestSequence"]?.int64 == 3)
        #expect(device["latest"]?["pulsegate.batch.sequence"]?.int64 == 3)
        try await uploader.close()
        await gateway.shutdown()
        withExtendedLifetime(gatewayDirectory) {}
    }

    @Test func sequenceNumbersSurviveARestartAndAreNeverReused() async throws {
        let fixture = try UploaderFixture()
        var uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "a")))
        try await uploader.seal(.flush)
        try await uploader.record(.event(EventEntry(name: "b")))
        try await uploader.seal(.flush)
        #expect(try await uploader.storedBatches().map(\.sequence) == [1, 2])
        // Drop both (kill switch): their numbers stay used.
        try await uploader.setKillSwitch(true)
        try await uploader.setKillSwitch(false)
        #expect(try await uploader.storedBatches().isEmpty)
        try await uploader.close()

        uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "c")))
        try await uploader.seal(.flush)
        #expect(try await uploader.storedBatches().map(\.sequence) == [3])
        #expect(try await uploader.status().diagnostics.lastSequence == 3)
        try await uploader.close()
    }

    @Test func levelsBehaveAsDocumented() async throws {
        let faults = try FaultServer()
        for level in DiagnosticsLevel.allCases {
            var fixture = try UploaderFixture()
            fixture.endpoint = faults.baseURL
            fixture.policy.diagnosticsLevel = level
            let uploader = try await fixture.open()
            try await uploader.record(.event(EventEntry(name: "x")))
            try await uploader.seal(.flush)
            let batch = try #require(try await uploader.storedBatches().first)
            let record = try diagnosticsAttributes(batch.body, encoding: batch.encoding, signal: .logs)
            #expect((record != nil) == (level >= .batchSummaries), "record at \(level)")
            #expect(batch.sequence == 1, "sequence at \(level)")
            #expect(try await uploader.flush().delivered == 1)
            let status = try await uploader.status()
            #expect(status.diagnostics.batchesAttempted == (level >= .batchSummaries ? 1 : 0), "counted at \(level)")
            if level >= .callDetails {
                #expect(status.recentCalls.map(\.call) == ["flush()", "seal(flush)", "record(event)"])
                #expect(status.recentCalls.first?.outcome.hasPrefix("ok: attempted 1, delivered 1") == true)
                for call in status.recentCalls {
                    #expect((call.stack?.isEmpty == false) == (level == .callDetailsAndStackTraces), "\(call)")
                }
            } else {
                #expect(status.recentCalls.isEmpty, "calls at \(level)")
            }
            try await uploader.close()
        }
        faults.stop()
    }

    @Test func aNewLevelTakesEffectWithoutARestart() async throws {
        var fixture = try UploaderFixture()
        fixture.policy.diagnosticsLevel = .none
        let uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "before")))
        try await uploader.seal(.flush)
        var policy = uploader.policy
        policy.diagnosticsLevel = .callDetails
        try await uploader.apply(policy: policy)
        try await uploader.record(.event(EventEntry(name: "after")))
        try await uploader.seal(.flush)
        let batches = try await uploader.storedBatches()
        #expect(batches.count == 2)
        #expect(try diagnosticsAttributes(batches[0].body, encoding: batches[0].encoding, signal: .logs) == nil)
        let record = try diagnosticsAttributes(batches[1].body, encoding: batches[1].encoding, signal: .logs)
        #expect(attribute(record, "pulsegate.diagnostics.level")?["stringValue"]?.string == "callDetails")
        let calls = try await uploader.status().recentCalls.map(\.call)
        #expect(calls == ["seal(flush)", "record(event)", "apply(policy:)"])
        try await uploader.close()
    }

    @Test func theCallLogIsBoundedInMemoryAndOnDisk() async throws {
        var fixture = try UploaderFixture()
        fixture.policy.diagnosticsLevel = .callDetails
        let uploader = try await fixture.open()
        for _ in 0..<(CallLog.diskCapacity + 100) {
            _ = try await uploader.sendDue()
            #expect(uploader.pendingCallLogEntries < CallLog.flushThreshold)
        }
        let status = try await uploader.status()
        #expect(status.recentCalls.count == UploaderStatus.recentCallLimit)
        #expect(status.recentCalls.allSatisfy { $0.call == "sendDue()" })
        #expect(try await uploader.callLogRows() == CallLog.diskCapacity)
        try await uploader.close()
    }
}
