import Foundation
import OTLPProtobuf
import PulseJSON
import PulseKit
import PulseTestSupport
import Synchronization
import Testing

@testable import PulseUploader

@Suite struct DeliveryTests {
    /// An uploader pointed at `server`, with one sealed log batch.
    func sealedBatch(_ server: FaultServer, policy: (inout UploadPolicy) -> Void = { _ in }) async throws -> (
        UploaderFixture, Uploader, Uploader.StoredBatch
    ) {
        var fixture = try UploaderFixture()
        fixture.endpoint = server.baseURL
        policy(&fixture.policy)
        let uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "checkout", attributes: ["items": 2])))
        try await uploader.seal(.flush)
        let batch = try #require(try await uploader.storedBatches().first)
        return (fixture, uploader, batch)
    }

    @Test func aSuccessDeletesTheBatchAndTheRequestCarriesTheApsioHeaders() async throws {
        let server = try FaultServer(script: [.ok])
        let (fixture, uploader, batch) = try await sealedBatch(server)
        let report = try await uploader.sendDue()
        #expect(report.attempted == 1)
        #expect(report.delivered == 1)
        #expect(try await uploader.storedBatches().isEmpty)

        let request = try #require(server.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/v1/logs")
        #expect(request.headers["apsio-batch-id"] == batch.batchId)
        #expect(request.headers["apsio-app-id"] == "test-app")
        #expect(request.headers["apsio-sent-at"] == RFC3339.format(epochMilliseconds: fixture.clock.milliseconds))
        #expect(request.headers["content-type"] == "application/json")
        #expect(request.headers["content-encoding"] == "gzip")
        #expect(request.body == batch.body)
        #expect(try parseBody(request.body, encoding: .gzip).root["resourceLogs"] != nil)
        try await uploader.close()
    }

    @Test func aDuplicateAnswerCountsAsDelivered() async throws {
        let server = try FaultServer(script: [.respond(status: 200, headers: ["Apsio-Duplicate": "true"])])
        let (fixture, uploader, _) = try await sealedBatch(server)
        let report = try await uploader.sendDue()
        #expect(report.delivered == 1)
        #expect(report.duplicates == 1)
        #expect(try await uploader.storedBatches().isEmpty)
        try await uploader.close()
        withExtendedLifetime(fixture) {}
    }

    @Test func aPartialSuccessDeletesTheBatchAndCountsTheRejectedRecords() async throws {
        let server = try FaultServer(script: [
            .respond(status: 200, body: #"{"partialSuccess":{"rejectedLogRecords":"1","errorMessage":"too large"}}"#)
        ])
        let (fixture, uploader, batch) = try await sealedBatch(server)
        let report = try await uploader.sendDue()
        #expect(report.partiallyRejectedRecords == 1)
        #expect(try await uploader.storedBatches().isEmpty)
        let status = try await uploader.status()
        #expect(status.drops[.partiallyRejected]?.records == 1)
        #expect(status.recentErrors.first?.batchId == batch.batchId)
        try await uploader.close()
        withExtendedLifetime(fixture) {}
    }

    @Test(arguments: [400, 413, 415]) func permanentRejectionsDropTheBatch(status: Int) async throws {
        let server = try FaultServer(script: [.respond(status: status, body: "{}")])
        let (fixture, uploader, batch) = try await sealedBatch(server)
        let report = try await uploader.sendDue()
        #expect(report.rejected == 1)
        #expect(try await uploader.storedBatches().isEmpty)
        let summary = try await uploader.status()
        #expect(
            summary.drops[.rejected] == UploaderStatus.DropCount(records: 1, batches: 1, bytes: Int64(batch.body.count))
        )
        #expect(summary.recentErrors.first?.status == status)
        #expect(server.requests.count == 1)
        try await uploader.close()
        withExtendedLifetime(fixture) {}
    }

    @Test(arguments: [401, 403]) func authenticationFailuresHoldTheQueueUntilThePolicyIsRefreshed(status: Int)
        async throws
    {
        let server = try FaultServer(script: [.respond(status: status)])
        let refreshed = Mutex<[Int]>([])
        var fixture = try UploaderFixture()
        fixture.endpoint = server.baseURL
        fixture.policyRefresh = { status in refreshed.withLock { $0.append(status) } }
        let uploader = try await fixture.open()
        try await uploader.record(.log(LogEntry(body: "a")))
        try await uploader.seal(.flush)
        let report = try await uploader.sendDue()
        #expect(report.authenticationHeld)
        #expect(refreshed.withLock { $0 } == [status])
        #expect(try await uploader.storedBatches().count == 1)

        // Held: nothing is sent, even when due.
        fixture.clock.stepWallClock(by: 60_000)
        let held = try await uploader.sendDue()
        #expect(held.attempted == 0)
        #expect(held.blockedBy == "authentication")
        // The 401/403 also asked the gateway for its policy (GET /v1/policy) before calling the hook.
        #expect(server.requests.map(\.method) == ["POST", "GET"])
        #expect(server.requests.last?.path == "/v1/policy")

        // A refreshed policy releases the hold.
        try await uploader.apply(policy: UploadPolicy())
        let released = try await uploader.sendDue()
        #expect(released.delivered == 1)
        #expect(server.requests.filter { $0.method == "POST" }.count == 2)
        try await uploader.close()
    }

    @Test func retryAfterInSecondsHoldsTheWholeQueue() async throws {
        let server = try FaultServer(script: [.respond(status: 429, headers: ["Retry-After": "30"])])
        let (fixture, uploader, batch) = try await sealedBatch(server)
        let start = fixture.clock.milliseconds
        let report = try await uploader.sendDue()
        #expect(report.retrying == 1)
        let stored = try #require(try await uploader.storedBatches().first)
        #expect(stored.nextAttemptMilliseconds >= start + 30_000)
        #expect(stored.nextAttemptMilliseconds <= start + 33_000)
        let status = try await uploader.status()
        #expect(status.retryAfterHoldUntilMilliseconds == stored.nextAttemptMilliseconds)

        // Another batch sealed meanwhile waits too.
        try await uploader.record(.log(LogEntry(body: "later")))
        try await uploader.seal(.flush)
        fixture.clock.stepWallClock(by: 29_999)
        let early = try await uploader.sendDue()
        #expect(early.attempted == 0)
        #expect(early.blockedBy == "retryAfter")

        fixture.clock.set(stored.nextAttemptMilliseconds)
        let later = try await uploader.sendDue()
        #expect(later.delivered == 2)
        #expect(server.requests.map { $0.headers["apsio-batch-id"] }.first == batch.batchId)
        try await uploader.close()
    }

    @Test func serviceUnavailableWithAnHTTPDateIsHonoured() async throws {
        let server = try FaultServer()
        let (fixture, uploader, _) = try await sealedBatch(server)
        let retryAt = fixture.clock.milliseconds / 1_000 * 1_000 + 120_000
        let date = httpDate(retryAt)
        server.enqueue([.respond(status: 503, headers: ["Retry-After": date])])
        _ = try await uploader.sendDue()
        let stored = try #require(try await uploader.storedBatches().first)
        #expect(stored.nextAttemptMilliseconds >= retryAt)
        #expect(stored.nextAttemptMilliseconds <= retryAt + 13_000)
        try await uploader.close()
    }

    @Test func aBatchsOwnFailureBacksItOffExponentiallyWithFullJitter() async throws {
        let server = try FaultServer(fallback: .respond(status: 404))
        let (fixture, uploader, batch) = try await sealedBatch(server) { policy in
            policy.backoffBaseMilliseconds = 1_000
        }
        var ceilings: [Int64] = []
        for attempt in 1...5 {
            let now = fixture.clock.milliseconds
            let report = try await uploader.sendDue()
            #expect(report.retrying == 1)
            let stored = try #require(try await uploader.storedBatches().first)
            #expect(stored.attempts == attempt)
            let delay = stored.nextAttemptMilliseconds - now
            let ceiling = Int64(1_000) << Int64(attempt - 1)
            #expect(delay >= 0 && delay <= ceiling)
            ceilings.append(ceiling)
            // Not due before its time.
            if delay > 0 {
                fixture.clock.set(stored.nextAttemptMilliseconds - 1)
                #expect(try await uploader.sendDue().attempted == 0)
            }
            fixture.clock.set(stored.nextAttemptMilliseconds)
        }
        #expect(server.requests.count == 5)
        // Every retry sent the same id and the same bytes.
        #expect(Set(server.requests.map { $0.headers["apsio-batch-id"] ?? "" }) == [batch.batchId])
        #expect(Set(server.requests.map { sha256Hex($0.body) }) == [sha256Hex(batch.body)])
        try await uploader.close()
    }

    @Test func aConnectionDroppedMidRequestIsRetriedWithTheSameIdAndBytes() async throws {
        let server = try FaultServer(script: [.dropMidRequest, .dropAfterRequest, .ok])
        let (fixture, uploader, batch) = try await sealedBatch(server)
        var report = try await uploader.sendDue()
        #expect(report.retrying == 1)
        #expect(try await uploader.status().recentErrors.first?.message.contains("curl") == true)
        fixture.clock.stepWallClock(by: 10_000)
        report = try await uploader.sendDue()
        #expect(report.retrying == 1)
        fixture.clock.stepWallClock(by: 10_000)
        report = try await uploader.sendDue()
        #expect(report.delivered == 1)
        #expect(server.droppedMidRequest == 1)
        let received = server.requests
        #expect(received.count == 2)
        #expect(received.allSatisfy { $0.headers["apsio-batch-id"] == batch.batchId })
        #expect(received.allSatisfy { sha256Hex($0.body) == sha256Hex(batch.body) })
        try await uploader.close()
    }

    @Test func aSlowAnswerBeyondTheTimeoutIsRetriedAndAnAnswerWithinItIsAccepted() async throws {
        let server = try FaultServer(script: [
            .slow(milliseconds: 3_000, then: .ok), .slow(milliseconds: 100, then: .ok),
        ])
        var fixture = try UploaderFixture()
        fixture.endpoint = server.baseURL
        fixture.transport = CurlTransport(
            options: CurlTransport.Options(connections: 1, requestTimeoutMilliseconds: 1_000))
        let uploader = try await fixture.open()
        try await uploader.record(.log(LogEntry(body: "x")))
        try await uploader.seal(.flush)
        let first = try await uploader.sendDue()
        #expect(first.retrying == 1)
        #expect(try await uploader.status().recentErrors.first?.message.contains("imeout") == true)
        fixture.clock.stepWallClock(by: 10_000)
        let second = try await uploader.sendDue()
        #expect(second.delivered == 1)
        try await uploader.close()
    }

    @Test func attemptsAreCappedPerWindow() async throws {
        // 404 is the batch's own failure (each batch backs off alone), so every batch stays due.
        let server = try FaultServer(fallback: .respond(status: 404))
        var fixture = try UploaderFixture()
        fixture.endpoint = server.baseURL
        fixture.policy.maximumAttemptsPerWindow = 3
        fixture.policy.attemptWindowMilliseconds = 60_000
        fixture.policy.backoffBaseMilliseconds = 1
        fixture.policy.backoffCapMilliseconds = 1
        fixture.policy.maximumBatchRecords = 1
        let uploader = try await fixture.open()
        for index in 0..<5 {
            try await uploader.record(.log(LogEntry(body: "\(index)")))
        }
        #expect(try await uploader.storedBatches().count == 5)
        let report = try await uploader.sendDue()
        #expect(report.attempted == 3)
        #expect(report.blockedBy == "attemptWindow")
        fixture.clock.stepWallClock(by: 30_000)
        #expect(try await uploader.sendDue().attempted == 0)
        fixture.clock.stepWallClock(by: 30_000)
        #expect(try await uploader.sendDue().attempted == 3)
        #expect(server.requests.count == 6)
        try await uploader.close()
    }

    @Test func theForegroundSessionReusesOneConnection() async throws {
        let server = try FaultServer()
        var fixture = try UploaderFixture()
        fixture.endpoint = server.baseURL
        fixture.policy.maximumBatchRecords = 1
        fixture.policy.maximumInFlight = 1
        fixture.transport = CurlTransport(options: CurlTransport.Options(connections: 1))
        let uploader = try await fixture.open()
        for index in 0..<6 {
            try await uploader.record(.log(LogEntry(body: "\(index)")))
        }
        let report = try await uploader.sendDue()
        #expect(report.delivered == 6)
        #expect(server.requests.count == 6)
        #expect(server.connectionCount == 1)
        // Oldest first.
        let batches = server.requests.compactMap { request -> String? in
            let root = try? parseBody(request.body, encoding: .gzip).root
            return root?["resourceLogs"]?[0]?["scopeLogs"]?[0]?["logRecords"]?[0]?["body"]?["stringValue"]?.string
        }
        #expect(batches == ["0", "1", "2", "3", "4", "5"])
        try await uploader.close()
    }

    @Test func meteredNetworksDeferAllButCrashUploads() async throws {
        let server = try FaultServer()
        var fixture = try UploaderFixture()
        fixture.endpoint = server.baseURL
        fixture.conditions = FixedConditions(DeliveryConditions(network: .metered, power: .normal))
        let uploader = try await fixture.open()
        try await uploader.record(.log(LogEntry(body: "can wait")))
        let crash = try await uploader.record(.crash(CrashReport(crashId: "c-9", message: "boom")))
        try await uploader.seal(.flush)
        let report = try #require(try await uploader.drain())
        #expect(report.delivered == 1)
        #expect(report.deferred == 1)
        let request = try #require(server.requests.first)
        #expect(
            try Uploader.recordIds(inBody: BodyCompression.decompress(request.body, encoding: .gzip), signal: .logs)
                == [crash.recordId])
        #expect(try await uploader.storedBatches().map(\.recordClass) == [.standard])
        // An explicit flush ignores the conditions.
        #expect(try await uploader.flush().delivered == 1)
        try await uploader.close()
    }

    @Test func lowPowerDefersToo() async throws {
        #expect(DeliveryConditions(network: .unmetered, power: .low).defersNonUrgentUploads)
        #expect(DeliveryConditions(network: .constrained, power: .normal).defersNonUrgentUploads)
        #expect(!DeliveryConditions(network: .unknown, power: .unknown).defersNonUrgentUploads)
    }

    @Test func crashReportsAreLeftToTheBackgroundPathInTheForeground() async throws {
        let server = try FaultServer()
        var fixture = try UploaderFixture()
        fixture.endpoint = server.baseURL
        let handOvers = HandOverLog()
        fixture.backgroundTransfer = handOvers
        let uploader = try await fixture.open()
        try await uploader.record(.crash(CrashReport(message: "boom")))
        #expect(try await uploader.sendDue().attempted == 0)
        let handOver = try await uploader.handOverDue()
        #expect(handOver?.reason == .urgentUpload)
        #expect(handOvers.count == 1)
        // Throttled: a second hand-over within 30 s does nothing unless forced.
        #expect(try await uploader.handOverDue() == nil)
        let report = try #require(try await uploader.drain())
        #expect(report.delivered == 1)
        #expect(server.requests.count == 1)
        try await uploader.close()
    }

    @Test func aSecondDrainOnTheSameQueueStandsBack() async throws {
        // The upstream holds its answer (a deliberately slow peer) long enough that the first
        // drain is surely still sending when the second one starts, even on a loaded machine.
        let server = try FaultServer(script: [.slow(milliseconds: 3_000, then: .ok)])
        let (fixture, uploader, _) = try await sealedBatch(server)
        let first = Task { try await uploader.drain() }
        // The first drain is sending once the upstream has its request.
        #expect(await server.waitForRequests(1))
        let second = try await uploader.drain()
        #expect(second == nil)
        let report = try await first.value
        #expect(report?.delivered == 1, "\(String(describing: report))")
        try await uploader.close()
        withExtendedLifetime(fixture) {}
    }

    func httpDate(_ milliseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1_000))
    }
}

/// A background transfer that records hand-overs (the Linux one spawns processes; see ProcessTests).
final class HandOverLog: BackgroundTransfer {
    private let handOvers = Mutex<[BackgroundHandOver]>([])

    var count: Int { handOvers.withLock { $0.count } }

    func handOver(_ handOver: BackgroundHandOver) async throws(UploaderError) {
        handOvers.withLock { $0.append(handOver) }
    }
}

@Suite struct ForegroundLoopTests {
    @Test func theRunLoopSealsOnTheIntervalAndSendsUntilCancelled() async throws {
        let server = try FaultServer()
        var fixture = try UploaderFixture()
        fixture.endpoint = server.baseURL
        let uploader = try await fixture.open()
        let receipt = try await uploader.record(.event(EventEntry(name: "tap")))
        let loop = Task { try await uploader.run() }
        // The loop stepped once and sleeps on the injected clock: the seal interval has not elapsed.
        #expect(await fixture.clock.waitForSleepers(1))
        #expect(server.requests.isEmpty)
        fixture.clock.advance(milliseconds: 10_000)
        #expect(await server.waitForRequests(1, seconds: 10))
        loop.cancel()
        try await loop.value
        let request = try #require(server.requests.first)
        let ids = try Uploader.recordIds(
            inBody: BodyCompression.decompress(request.body, encoding: .gzip), signal: .logs)
        #expect(ids == [receipt.recordId])
        #expect(try await uploader.status().totalRecords == 0)
        try await uploader.close()
    }

    @Test func theRunLoopDoesNotSendWhileInTheBackground() async throws {
        let server = try FaultServer()
        var fixture = try UploaderFixture()
        fixture.endpoint = server.baseURL
        let uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "tap")))
        try await uploader.enterBackground()
        let loop = Task { try await uploader.run() }
        // Several steps of the loop, each past the seal interval: none sends while in the background.
        for _ in 0..<3 {
            #expect(await fixture.clock.waitForSleepers(1))
            fixture.clock.advance(milliseconds: 10_000)
        }
        #expect(await fixture.clock.waitForSleepers(1))
        #expect(server.requests.isEmpty)
        try await uploader.enterForeground()
        fixture.clock.advance(milliseconds: 1_000)  // the loop's next step
        #expect(await server.waitForRequests(1, seconds: 10))
        loop.cancel()
        try await loop.value
        try await uploader.close()
    }
}
