import Foundation
import OTLPProtobuf
import PulseKit
import PulseTestSupport
import Testing

@testable import PulseUploader

@Suite struct QueueTests {
    @Test func recordsAreDurableAcrossReopenAndTheIdentityIsKept() async throws {
        let fixture = try UploaderFixture()
        let first = try await fixture.open()
        let receipt = try await first.record(.event(EventEntry(name: "launch")))
        #expect(receipt.signal == .logs)
        #expect(receipt.recordClass == .standard)
        let device = first.identity.deviceId
        try await first.close()

        let second = try await fixture.open()
        #expect(second.identity.deviceId == device)
        #expect(try await second.queuedRecordIds() == [receipt.recordId])
        let status = try await second.status()
        #expect(status.totalRecords == 1)
        #expect(status.classes.first { $0.recordClass == .standard }?.waitingRecords == 1)
        try await second.close()
    }

    @Test func capDropsAttachmentsFirstThenOldestStandardAndPriorityLast() async throws {
        var fixture = try UploaderFixture()
        fixture.policy.maximumQueueRecords = 6
        let uploader = try await fixture.open()
        let file = fixture.directory.path + "/screenshot.png"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: file))

        let attachment = try await uploader.record(.attachment(Attachment(path: file)))
        let crash = try await uploader.record(.crash(CrashReport(crashId: "c-1", message: "boom")))
        let exit = try await uploader.record(.exit(ExitRecord(reason: "crash")))
        var standard: [String] = []
        for index in 0..<3 {
            standard.append(try await uploader.record(.event(EventEntry(name: "e\(index)"))).recordId)
        }
        #expect(try await uploader.status().totalRecords == 6)

        // At the cap: the attachment goes first.
        standard.append(try await uploader.record(.event(EventEntry(name: "e3"))).recordId)
        var ids = try await uploader.queuedRecordIds()
        #expect(!ids.contains(attachment.recordId))
        #expect(ids.isSuperset(of: [crash.recordId, exit.recordId]))

        // Then the oldest standard records, never crash or exit records.
        for index in 4..<8 {
            standard.append(try await uploader.record(.event(EventEntry(name: "e\(index)"))).recordId)
        }
        ids = try await uploader.queuedRecordIds()
        #expect(ids == Set([crash.recordId, exit.recordId] + standard.suffix(4)))

        // A new crash report still displaces a standard record.
        let crash2 = try await uploader.record(.crash(CrashReport(crashId: "c-2", message: "again")))
        ids = try await uploader.queuedRecordIds()
        #expect(ids == Set([crash.recordId, crash2.recordId, exit.recordId] + standard.suffix(3)))

        let status = try await uploader.status()
        #expect(status.drops[.cap]?.records == 6)
        #expect(status.drops[.cap]?.batches == 1)
        try await uploader.close()
    }

    @Test func aStandardRecordIsRefusedWhenOnlyPriorityDataIsLeft() async throws {
        var fixture = try UploaderFixture()
        fixture.policy.maximumQueueRecords = 2
        let uploader = try await fixture.open()
        let crash = try await uploader.record(.crash(CrashReport(message: "one")))
        let summary = try await uploader.record(.sessionSummary(SessionSummary(sessionId: "s")))
        await #expect(throws: UploaderError.self) {
            try await uploader.record(.log(LogEntry(body: "no room")))
        }
        #expect(try await uploader.queuedRecordIds() == [crash.recordId, summary.recordId])
        // Among priority records the oldest goes.
        let crash2 = try await uploader.record(.crash(CrashReport(message: "two")))
        #expect(try await uploader.queuedRecordIds() == [summary.recordId, crash2.recordId])
        let drops = try await uploader.status().drops
        #expect(drops[.cap]?.records == 2)
        try await uploader.close()
    }

    @Test func byteCapCountsStoredBytes() async throws {
        var fixture = try UploaderFixture()
        fixture.policy.maximumBatchBytes = 4_096
        fixture.policy.maximumQueueBytes = 8_192
        let uploader = try await fixture.open()
        for index in 0..<40 {
            try await uploader.record(paddedEvent("e\(index)", size: 600))
        }
        let status = try await uploader.status()
        #expect(status.totalBytes <= 8_192)
        #expect(status.totalBytes > 4_096)
        #expect((status.drops[.cap]?.records ?? 0) > 0)
        try await uploader.close()
    }

    @Test func oversizedRecordsAreRefusedAndCounted() async throws {
        var fixture = try UploaderFixture()
        fixture.policy.maximumBatchBytes = 1_024
        fixture.policy.maximumQueueBytes = 1_024 * 1_024
        let uploader = try await fixture.open()
        do {
            try await uploader.record(paddedEvent(size: 3_000))
            Issue.record("an oversized record was queued")
        } catch {
            #expect(error.code == .oversized)
        }
        #expect(try await uploader.status().drops[.oversized]?.records == 1)
        #expect(try await uploader.status().totalRecords == 0)
        try await uploader.close()
    }

    @Test func batchesAndRecordsOlderThanTheMaximumAgeAreDropped() async throws {
        let fixture = try UploaderFixture()
        let uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "old-sealed")))
        try await uploader.seal(.flush)
        try await uploader.record(.event(EventEntry(name: "old-waiting")))
        fixture.clock.stepWallClock(by: 6 * 24 * 3_600_000)
        let fresh = try await uploader.record(.event(EventEntry(name: "fresh")))
        fixture.clock.stepWallClock(by: 24 * 3_600_000 + 1)
        _ = try await uploader.sendDue()  // expiry runs before anything is claimed
        #expect(try await uploader.queuedRecordIds() == [fresh.recordId])
        let drops = try await uploader.status().drops
        #expect(drops[.age]?.records == 2)
        #expect(drops[.age]?.batches == 1)
        try await uploader.close()
    }

    @Test func withdrawingConsentPurgesEverythingAndStopsCollectionUntilGranted() async throws {
        let fixture = try UploaderFixture()
        let uploader = try await fixture.open()
        for index in 0..<5 {
            try await uploader.record(.event(EventEntry(name: "e\(index)")))
        }
        try await uploader.seal(.flush)
        try await uploader.record(.crash(CrashReport(message: "kept?")))
        try await uploader.record(.log(LogEntry(body: "waiting")))
        try await uploader.revokeConsent()
        var status = try await uploader.status()
        #expect(status.totalRecords == 0)
        #expect(status.totalBytes == 0)
        #expect(!status.consentGranted)
        #expect(status.drops[.consent]?.records == 7)
        do {
            try await uploader.record(.log(LogEntry(body: "refused")))
            Issue.record("recorded without consent")
        } catch {
            #expect(error.code == .collectionStopped)
        }
        status = try await uploader.status()
        #expect(status.drops[.consent]?.records == 8)
        #expect(status.totalRecords == 0)

        try await uploader.grantConsent()
        try await uploader.record(.log(LogEntry(body: "accepted")))
        #expect(try await uploader.status().totalRecords == 1)
        try await uploader.close()
    }

    @Test func theKillSwitchPurgesAndStopsCollectionUntilCleared() async throws {
        let fixture = try UploaderFixture()
        let uploader = try await fixture.open()
        try await uploader.record(.exit(ExitRecord(reason: "user")))
        try await uploader.record(.span(SpanEntry(name: "work")))
        var policy = UploadPolicy()
        policy.killSwitch = true
        try await uploader.apply(policy: policy)
        var status = try await uploader.status()
        #expect(status.killSwitch)
        #expect(status.totalRecords == 0)
        #expect(status.drops[.killSwitch]?.records == 2)
        await #expect(throws: UploaderError.self) { try await uploader.record(.log(LogEntry(body: "x"))) }

        // Reopening keeps the switch: it lives in the queue, not in memory.
        try await uploader.close()
        let reopened = try await fixture.open()
        await #expect(throws: UploaderError.self) { try await reopened.record(.log(LogEntry(body: "x"))) }
        policy.killSwitch = false
        try await reopened.apply(policy: policy)
        try await reopened.record(.log(LogEntry(body: "back")))
        status = try await reopened.status()
        #expect(!status.killSwitch)
        #expect(status.totalRecords == 1)
        try await reopened.close()
    }

    @Test func anInvalidPolicyChangesNothing() async throws {
        let fixture = try UploaderFixture()
        let uploader = try await fixture.open()
        var bad = UploadPolicy()
        bad.killSwitch = true
        bad.maximumInFlight = 0
        await #expect(throws: UploaderError.self) { try await uploader.apply(policy: bad) }
        #expect(!(try await uploader.status().killSwitch))
        #expect(uploader.policy == UploadPolicy())
        try await uploader.close()
    }
}
