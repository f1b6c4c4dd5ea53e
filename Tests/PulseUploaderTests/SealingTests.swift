import Foundation
import OTLPProtobuf
import PulseHashing
import PulseJSON
import PulseProtocol
import PulseTestSupport
import Testing

@testable import PulseUploader

@Suite struct SealingTests {
    @Test func reachingTheRecordLimitSealsABatch() async throws {
        var fixture = try UploaderFixture()
        fixture.policy.maximumBatchRecords = 3
        let uploader = try await fixture.open()
        try await uploader.record(.log(LogEntry(body: "1")))
        try await uploader.record(.log(LogEntry(body: "2")))
        #expect(try await uploader.storedBatches().isEmpty)
        try await uploader.record(.log(LogEntry(body: "3")))
        let batches = try await uploader.storedBatches()
        #expect(batches.count == 1)
        #expect(batches.first?.records == 3)
        #expect(try await uploader.status().classes.allSatisfy { $0.waitingRecords == 0 })
        try await uploader.close()
    }

    @Test func reachingTheByteLimitSealsFullBatchesOnly() async throws {
        var fixture = try UploaderFixture()
        fixture.policy.maximumBatchBytes = 2_048
        // The diagnostics record rides on top of the limit; this test measures the records alone.
        fixture.policy.diagnosticsLevel = .none
        let uploader = try await fixture.open()
        for index in 0..<9 {
            try await uploader.record(paddedEvent("e\(index)", size: 600))
        }
        let batches = try await uploader.storedBatches()
        #expect(!batches.isEmpty)
        for batch in batches {
            let raw = try BodyCompression.decompress(batch.body, encoding: batch.encoding)
            #expect(batch.records <= 3)
            #expect(raw.count < 2_048 + 1_024)  // the records fit the limit; the envelope comes on top
        }
        let waiting = try await uploader.status().classes.first { $0.recordClass == .standard }?.waitingRecords ?? 0
        #expect(waiting > 0)
        #expect(waiting < 4)
        try await uploader.close()
    }

    @Test func theForegroundIntervalSealsAfterTenSecondsByDefault() async throws {
        let fixture = try UploaderFixture()
        let uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "a")))
        fixture.clock.stepWallClock(by: 9_999)
        #expect(try await uploader.seal() == 0)
        fixture.clock.stepWallClock(by: 1)
        let sealed = try await uploader.sealBatches(nil)
        #expect(sealed.count == 1)
        #expect(sealed.first?.trigger == .interval)
        try await uploader.close()
    }

    @Test func movingToTheBackgroundSealsEverythingOneBatchPerSignal() async throws {
        let fixture = try UploaderFixture()
        let uploader = try await fixture.open()
        try await uploader.record(.log(LogEntry(body: "l")))
        try await uploader.record(.span(SpanEntry(name: "s")))
        try await uploader.record(.metric(MetricPoint(name: "m", value: .int(1))))
        try await uploader.record(.exit(ExitRecord(reason: "user")))
        #expect(try await uploader.enterBackground() == nil)  // no background transfer configured
        let batches = try await uploader.storedBatches()
        #expect(Set(batches.map(\.signal)) == [.logs, .traces, .metrics])
        #expect(batches.count == 4)  // the exit record seals apart from the standard log record
        #expect(Set(batches.map(\.recordClass)) == [.standard, .lifecycle])
        #expect(try await uploader.isInBackground())
        try await uploader.enterForeground()
        #expect(!(try await uploader.isInBackground()))
        try await uploader.close()
    }

    @Test func crashesAndAttachmentsSealAtOnceOnTheBackgroundRoute() async throws {
        let fixture = try UploaderFixture()
        let uploader = try await fixture.open()
        let file = fixture.directory.path + "/log.txt"
        try Data("log".utf8).write(to: URL(fileURLWithPath: file))
        try await uploader.record(.crash(CrashReport(crashId: "c", message: "boom")))
        try await uploader.record(.attachment(Attachment(path: file)))
        try await uploader.record(.attachment(Attachment(path: file)))
        let batches = try await uploader.storedBatches()
        #expect(batches.map(\.recordClass) == [.crash, .attachment, .attachment])
        #expect(batches.allSatisfy { $0.background && $0.records == 1 })
        try await uploader.close()
    }

    @Test func theSealedBodyIsAnOTLPExportRequestWithTheResource() async throws {
        let fixture = try UploaderFixture()
        let uploader = try await fixture.open()
        let first = try await uploader.record(.event(EventEntry(name: "one")))
        let second = try await uploader.record(.log(LogEntry(body: "two")))
        try await uploader.seal(.flush)
        let batch = try #require(try await uploader.storedBatches().first)
        #expect(Hex.isLowercaseHex(batch.batchId, length: 32))
        #expect(batch.encoding == .gzip)
        let root = try parseBody(batch.body, encoding: batch.encoding).root
        let resource = try #require(root["resourceLogs"]?[0])
        let attributes = resource["resource"]?["attributes"]
        #expect(attribute(attributes, "device.id")?["stringValue"]?.string == uploader.identity.deviceId)
        #expect(
            attribute(attributes, "app.installation.id")?["stringValue"]?.string == uploader.identity.installationId)
        #expect(attribute(attributes, "service.version")?["stringValue"]?.string == "1.2.3")
        #expect(attribute(attributes, "service.name")?["stringValue"]?.string == "test-app")
        #expect(attribute(attributes, "telemetry.sdk.name")?["stringValue"]?.string == "pulsegate-uploader")
        #expect(attribute(attributes, "os.type")?["stringValue"]?.string == "linux")
        let scope = try #require(resource["scopeLogs"]?[0])
        #expect(scope["scope"]?["name"]?.string == "pulsegate.uploader")
        let uids = scope["logRecords"]?.elements.compactMap {
            attribute($0["attributes"], "log.record.uid")?["stringValue"]?.string
        }
        // The records, then the diagnostics record the sealer appends (docs/diagnostics.md).
        #expect(uids?.prefix(2) == [first.recordId, second.recordId])
        #expect(uids?.count == 3)
        #expect(scope["logRecords"]?[2]?["eventName"]?.string == "pulsegate.diagnostics")
        try await uploader.close()
    }

    @Test func zstdBatchesWhenThePolicySaysSo() async throws {
        var fixture = try UploaderFixture()
        fixture.policy.encoding = .zstd
        let uploader = try await fixture.open()
        let receipt = try await uploader.record(.span(SpanEntry(name: "s")))
        try await uploader.seal(.flush)
        let batch = try #require(try await uploader.storedBatches().first)
        #expect(batch.encoding == .zstd)
        #expect(
            try Uploader.recordIds(inBody: try BodyCompression.decompress(batch.body, encoding: .zstd), signal: .traces)
                == [receipt.recordId])
        try await uploader.close()
    }

    @Test func recordsFromAnEarlierIdentityKeepTheirResource() async throws {
        var fixture = try UploaderFixture()
        let before = try await fixture.open()
        try await before.record(.log(LogEntry(body: "old version")))
        try await before.close()
        fixture.seed = 99
        var configuration = UploaderConfiguration(
            endpoint: fixture.endpoint, appId: "test-app", dataDirectory: fixture.directory.path)
        configuration.clock = fixture.clock.uploaderClock
        configuration.appVersion = "2.0.0"
        let after = try await Uploader(configuration: configuration)
        try await after.record(.log(LogEntry(body: "new version")))
        try await after.seal(.flush)
        let batch = try #require(try await after.storedBatches().first)
        let resources = try parseBody(batch.body, encoding: batch.encoding).root["resourceLogs"]
        let versions = resources?.elements.compactMap {
            attribute($0["resource"]?["attributes"], "service.version")?["stringValue"]?.string
        }
        #expect(versions == ["1.2.3", "2.0.0"])
        try await after.close()
    }
}
