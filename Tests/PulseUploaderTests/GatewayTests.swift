import Foundation
import OTLPProtobuf
import PulseGateway
import PulseKit
import PulseTestSupport
import Testing

@testable import PulseUploader

/// The uploader against the real gateway (in-process, port 0, embedded upstream).
@Suite(.serialized) struct GatewayTests {
    func startGateway() async throws -> (RunningGateway, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let configuration = GatewayConfiguration(
            dataDirectory: directory.path + "/gateway", listenPort: 0, shutdownGracePeriod: .seconds(2))
        return (try await GatewayApp.start(configuration), directory)
    }

    @Test func everyRecordKindIsAcceptedByTheGateway() async throws {
        let (gateway, gatewayDirectory) = try await startGateway()
        var fixture = try UploaderFixture(clock: ManualClock(UploaderClock.system.nowMilliseconds()))
        fixture.endpoint = "http://127.0.0.1:\(gateway.httpPort)"
        for encoding in BodyEncoding.allCases {
            fixture.policy.encoding = encoding
            let uploader = try await fixture.open()
            let file = fixture.directory.path + "/note.txt"
            try Data("attached".utf8).write(to: URL(fileURLWithPath: file))
            try await uploader.record(.event(EventEntry(name: "checkout", attributes: ["items": 3], sessionId: "s1")))
            try await uploader.record(.log(LogEntry(body: "disk low", severity: .error)))
            try await uploader.record(
                .crash(CrashReport(crashId: "crash-\(encoding)", message: "SIGSEGV", stack: "#0")))
            try await uploader.record(.exit(ExitRecord(reason: "crash", code: 139)))
            try await uploader.record(.sessionSummary(SessionSummary(sessionId: "s1", durationMilliseconds: 4_000)))
            try await uploader.record(.attachment(Attachment(path: file, crashId: "crash-\(encoding)")))
            try await uploader.record(
                .span(SpanEntry(name: "GET /items", kind: .client, attributes: ["http.request.method": "GET"])))
            try await uploader.record(
                .metric(
                    MetricPoint(name: "requests", value: .int(5), kind: .sum(monotonic: true, temporality: .delta))))
            let report = try await uploader.flush()
            #expect(report.rejected == 0)
            #expect(report.retrying == 0)
            #expect(report.partiallyRejectedRecords == 0)
            // standard logs, crash, lifecycle, attachment, span and metric batches
            #expect(report.delivered == 6, "\(report) with \(encoding)")
            let status = try await uploader.status()
            #expect(status.totalRecords == 0)
            #expect(status.recentErrors.isEmpty, "\(status.recentErrors)")
            try await uploader.close()
        }
        await gateway.shutdown()
        withExtendedLifetime(gatewayDirectory) {}
    }

    @Test func aRetriedBatchIsAnsweredAsADuplicate() async throws {
        let (gateway, gatewayDirectory) = try await startGateway()
        var fixture = try UploaderFixture(clock: ManualClock(UploaderClock.system.nowMilliseconds()))
        fixture.endpoint = "http://127.0.0.1:\(gateway.httpPort)"
        let uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "purchase")))
        try await uploader.seal(.flush)
        let batch = try #require(try await uploader.storedBatches().first)
        #expect(try await uploader.flush().delivered == 1)

        // The same id and bytes again, as after a kill mid-upload: stored once, answered 200 + duplicate.
        let transport = CurlTransport(options: CurlTransport.Options(connections: 1))
        let response = try await transport.send(
            UploadRequest(
                url: fixture.endpoint + batch.signal.path,
                headers: [
                    ("Apsio-Batch-Id", batch.batchId), ("Apsio-App-Id", "test-app"),
                    ("Apsio-Sent-At", RFC3339.format(epochMilliseconds: fixture.clock.milliseconds)),
                    ("Content-Type", "application/json"), ("Content-Encoding", batch.encoding.rawValue),
                ],
                body: batch.body))
        #expect(response.status == 200)
        #expect(response.headers["apsio-duplicate"] == "true")
        #expect(UploadOutcome.classify(response, signal: .logs, now: 0) == .delivered(duplicate: true))
        transport.close()
        try await uploader.close()
        await gateway.shutdown()
        withExtendedLifetime(gatewayDirectory) {}
    }
}
