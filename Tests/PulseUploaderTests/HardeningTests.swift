import Foundation
import PulseJSON
import PulseKit
import PulseProtocol
import PulseStorage
import PulseTestSupport
import Synchronization
import Testing

@testable import PulseUploader

/// `log.record.uid` values are ULIDs (Apsio 4.3: "a UUID or ULID").
@Suite struct ULIDTests {
    /// The 48-bit millisecond time a ULID starts with.
    static func time(_ ulid: String) -> Int64 {
        var value: Int64 = 0
        for byte in ulid.utf8.prefix(10) {
            let digit = ULIDGenerator.alphabet.firstIndex(of: byte)!
            value = value << 5 | Int64(digit)
        }
        return value
    }

    @Test func aULIDIs26CrockfordCharactersCarryingTheTimeAndTheInjectedRandomBits() {
        let now: Int64 = 1_700_000_000_123
        let first = ULIDGenerator(random: RandomSource(seed: 3)).next(milliseconds: now)
        #expect(first.utf8.count == 26)
        #expect(ULIDGenerator.isValid(first))
        #expect(first.utf8.allSatisfy { !"ILOU".utf8.contains($0) })
        #expect(Self.time(first) == now)
        // The random part comes from the injected source: the same seed gives the same id, another seed not.
        #expect(ULIDGenerator(random: RandomSource(seed: 3)).next(milliseconds: now) == first)
        #expect(ULIDGenerator(random: RandomSource(seed: 4)).next(milliseconds: now) != first)
        // The canonical encoding of known values (ulid/spec: 0 and the maximum).
        #expect(ULIDGenerator.encode(0) == "00000000000000000000000000")
        #expect(ULIDGenerator.encode(UInt128.max) == "7ZZZZZZZZZZZZZZZZZZZZZZZZZ")
        #expect(ULIDGenerator.encode(UInt128(1) << 80 | 1) == "0000000001" + "0000000000000001")
    }

    @Test func idsSortInTheOrderTheyWereMadeWithinAMillisecondAndAcrossMilliseconds() {
        let generator = ULIDGenerator(random: RandomSource(seed: 9))
        var ids: [String] = []
        for millisecond in 0..<20 {
            for _ in 0..<50 {
                ids.append(generator.next(milliseconds: 1_700_000_000_000 + Int64(millisecond)))
            }
        }
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == ids.count)
        // A clock that steps back keeps counting on from the last id.
        let before = generator.next(milliseconds: 1_700_000_001_000)
        let after = generator.next(milliseconds: 1_699_999_000_000)
        #expect(before < after)
    }

    @Test func recordsGetULIDsInQueueOrder() async throws {
        let fixture = try UploaderFixture()
        let uploader = try await fixture.open()
        var receipts: [RecordReceipt] = []
        for index in 0..<30 {
            receipts.append(try await uploader.record(.event(EventEntry(name: "e\(index)"))))
            if index % 7 == 0 { fixture.clock.stepWallClock(by: 1) }
        }
        #expect(receipts.allSatisfy { ULIDGenerator.isValid($0.recordId) })
        #expect(receipts.map(\.recordId) == receipts.sorted { $0.sequence < $1.sequence }.map(\.recordId).sorted())
        #expect(Self.time(receipts[0].recordId) == 1_700_000_000_000)
        try await uploader.close()
    }
}

/// A failure that is the endpoint's backs off the endpoint, not the batch; the oldest due batch goes first.
@Suite struct EndpointBackoffTests {
    /// The record ids (`log.record.uid`) of the batches the server answered 200, in arrival order.
    static func deliveredUIDs(_ server: FaultServer, encoding: BodyEncoding) throws -> [String] {
        var uids: [String] = []
        for request in server.requests where request.method == "POST" {
            let document = try parseBody(request.body, encoding: encoding)
            func children(_ node: JSONNode?) -> [JSONNode] { node.map { Array($0.elements) } ?? [] }
            for resource in children(document.root["resourceLogs"]) {
                for scope in children(resource["scopeLogs"]) {
                    for record in children(scope["logRecords"]) {
                        uids.append(attribute(record["attributes"], "log.record.uid")?["stringValue"]?.string ?? "")
                    }
                }
            }
        }
        return uids
    }

    @Test func serverErrorsBackTheEndpointOffExponentiallyAndEveryBatchWaitsTogether() async throws {
        let server = try FaultServer(fallback: .respond(status: 500))
        let fixture = try UploaderFixture(sendingTo: server, policy: oneBatchPerRecordOneInFlight)
        let uploader = try await fixture.open()
        try await queueLogs(uploader, 3)
        for failure in 1...5 {
            let now = fixture.clock.milliseconds
            let report = try await uploader.sendDue()
            // One attempt per round: the first failure holds the endpoint, so the other batches wait too.
            #expect(report.attempted == 1)
            #expect(report.blockedBy == "endpointBackoff")
            let status = try await uploader.status()
            #expect(status.endpointFailures == failure)
            let hold = try #require(status.endpointBackoffUntilMilliseconds)
            #expect(hold > now && hold - now <= Int64(1_000) << Int64(failure - 1))
            #expect(status.nextAttemptMilliseconds == hold)
            // Every batch is rescheduled to the same moment, none to its own jitter.
            #expect(try await uploader.storedBatches().allSatisfy { $0.nextAttemptMilliseconds <= hold })
            fixture.clock.set(hold - 1)
            #expect(try await uploader.sendDue().attempted == 0)
            fixture.clock.set(hold)
        }
        // The backoff is stored: a restarted uploader keeps it.
        #expect(try await uploader.sendDue().attempted == 1)
        let held = try #require(try await uploader.status().endpointBackoffUntilMilliseconds)
        try await uploader.close()
        fixture.clock.set(held - 500)
        let reopened = try await fixture.open()
        #expect(try await reopened.status().endpointBackoffUntilMilliseconds == held)
        #expect(try await reopened.sendDue().attempted == 0)
        // Any answer that is not the endpoint's clears it.
        server.setFallback(.ok)
        fixture.clock.set(held)
        let report = try await reopened.sendDue()
        #expect(report.delivered == 3)
        #expect(try await reopened.status().endpointFailures == 0)
        #expect(try await reopened.status().endpointBackoffUntilMilliseconds == nil)
        // The batches were sent oldest first: batch 1 five times, then 1, 2, 3.
        let bodies = try Self.deliveredUIDs(server, encoding: .gzip)
        #expect(bodies.count >= 9)
        try await reopened.close()
    }

    @Test func threeHundredRecordsQueuedInOrderArriveInOrderAfterAnOutage() async throws {
        // Down: every connection is dropped without an answer.
        let server = try FaultServer(fallback: .dropAfterRequest)
        var fixture = try UploaderFixture(sendingTo: server) { policy in
            policy.maximumBatchRecords = 10
            policy.maximumInFlight = 1
            policy.maximumAttemptsPerWindow = 1_000
        }
        fixture.seed = 11
        let uploader = try await fixture.open()
        var queued: [String] = []
        for index in 0..<300 {
            queued.append(try await uploader.record(.log(LogEntry(body: "r\(index)"))).recordId)
        }
        try await uploader.seal(.flush)
        #expect(try await uploader.storedBatches().count == 30)
        // The outage lasts a few rounds; the clock moves in small steps, so batches with their own jitter
        // would become due one by one, out of order.
        var rounds = 0
        while rounds < 8 {
            _ = try await uploader.sendDue()
            fixture.clock.stepWallClock(by: 150)
            rounds += 1
        }
        #expect(server.requests.count >= 1)
        let failedAttempts = server.requests.count
        // Up again.
        server.setFallback(.ok)
        var delivered = 0
        for _ in 0..<400 where delivered < 30 {
            delivered += try await uploader.sendDue().delivered
            fixture.clock.stepWallClock(by: 150)
        }
        #expect(delivered == 30)
        // (Batches also carry the uploader's own diagnostics records; only the queued records count.)
        let queuedSet = Set(queued)
        let arrived = try Self.deliveredUIDs(server, encoding: .gzip).filter { queuedSet.contains($0) }
        // The failed attempts carried the oldest batch; what arrived answered 200 is the whole queue, in order.
        let answered = Array(arrived.dropFirst(failedAttempts * 10))
        #expect(answered == queued)
        let firstFailed = Array(arrived.prefix(failedAttempts * 10))
        #expect(Set(firstFailed).isSubset(of: Set(queued.prefix(10))))
        try await uploader.close()
    }

    @Test func aBatchRefusedForItsOwnReasonBacksOffAloneAndNewerBatchesOvertakeIt() async throws {
        let server = try FaultServer(script: [.respond(status: 404)], fallback: .ok)
        let fixture = try UploaderFixture(sendingTo: server, policy: oneBatchPerRecordOneInFlight)
        let uploader = try await fixture.open()
        try await queueLogs(uploader, 3)
        let report = try await uploader.sendDue()
        #expect(report.retrying == 1)
        #expect(report.delivered == 2)
        #expect(try await uploader.status().endpointFailures == 0)
        #expect(try await uploader.storedBatches().count == 1)
        try await uploader.close()
    }
}

/// Stored times left over from a backward wall-clock step do not park the queue.
@Suite struct ClockStepTests {
    static let day: Int64 = 86_400_000

    @Test func aBackwardStepDoesNotParkABackingOffBatchTheEndpointOrARetryAfterHold() async throws {
        let server = try FaultServer(
            script: [
                .respond(status: 404), .respond(status: 500), .respond(status: 429, headers: ["Retry-After": "3600"]),
            ], fallback: .ok)
        let fixture = try UploaderFixture(sendingTo: server)
        let uploader = try await fixture.open()
        try await uploader.record(.log(LogEntry(body: "x")))
        try await uploader.seal(.flush)
        // The batch's own backoff, then the clock steps back three days.
        #expect(try await uploader.sendDue().retrying == 1)
        fixture.clock.stepWallClock(by: -3 * Self.day)
        #expect(try await uploader.sendDue().attempted == 1)  // 500: the endpoint backs off
        #expect(try await uploader.status().endpointBackoffUntilMilliseconds != nil)
        fixture.clock.stepWallClock(by: -3 * Self.day)
        #expect(try await uploader.status().endpointBackoffUntilMilliseconds == nil)
        #expect(try await uploader.sendDue().attempted == 1)  // 429 with Retry-After: one hour
        #expect(try await uploader.status().retryAfterHoldUntilMilliseconds != nil)
        fixture.clock.stepWallClock(by: -3 * Self.day)
        #expect(try await uploader.status().retryAfterHoldUntilMilliseconds == nil)
        let report = try await uploader.sendDue()
        #expect(report.delivered == 1)
        #expect(server.requests.count == 4)
        try await uploader.close()
    }

    @Test func aSmallBackwardStepStillHonoursTheWait() async throws {
        let server = try FaultServer(script: [.respond(status: 429, headers: ["Retry-After": "3600"])], fallback: .ok)
        let fixture = try UploaderFixture(sendingTo: server)
        let uploader = try await fixture.open()
        try await uploader.record(.log(LogEntry(body: "x")))
        try await uploader.seal(.flush)
        #expect(try await uploader.sendDue().retrying == 1)
        fixture.clock.stepWallClock(by: -10_000)
        #expect(try await uploader.sendDue().attempted == 0)
        #expect(try await uploader.status().retryAfterHoldUntilMilliseconds != nil)
        try await uploader.close()
    }

    @Test func recordsWaitingFromBeforeABackwardStepAreSealedAndSent() async throws {
        let server = try FaultServer(fallback: .ok)
        let fixture = try UploaderFixture(sendingTo: server)
        let uploader = try await fixture.open()
        try await uploader.record(.log(LogEntry(body: "x")))
        fixture.clock.stepWallClock(by: -2 * Self.day)
        #expect(try await uploader.seal() == 1)
        #expect(try await uploader.sendDue().delivered == 1)
        try await uploader.close()
    }
}

/// Inside one boot, the queue notices a wall-clock step against the shared monotonic clock and moves every
/// stored time by it, so waits last as long as they were meant to.
@Suite struct ClockRebaseTests {
    static func open(_ directory: TemporaryDirectory, _ clock: ManualClock, endpoint: String) async throws
        -> Uploader
    {
        var configuration = UploaderConfiguration(endpoint: endpoint, appId: "test-app", dataDirectory: directory.path)
        configuration.clock = clock.uploaderClockWithMonotonic
        configuration.random = RandomSource(seed: 5)
        configuration.transport = CurlTransport(options: CurlTransport.Options(connections: 2))
        return try await Uploader(configuration: configuration)
    }

    @Test func aRetryAfterHoldLastsItsHourAcrossABackwardStepSeenByTwoProcesses() async throws {
        let server = try FaultServer(
            script: [.respond(status: 429, headers: ["Retry-After": "3600"])], fallback: .ok)
        let directory = try TemporaryDirectory()
        let clock = ManualClock(now: .seconds(5_000))
        let first = try await Self.open(directory, clock, endpoint: server.baseURL)
        let second = try await Self.open(directory, clock, endpoint: server.baseURL)
        try await first.record(.log(LogEntry(body: "x")))
        try await first.seal(.flush)
        #expect(try await first.sendDue().retrying == 1)
        let hold = try #require(try await first.status().retryAfterHoldUntilMilliseconds)
        // NTP pulls the wall clock back 30 minutes; both processes look.
        clock.stepWallClock(by: -1_800_000)
        #expect(try await first.sendDue().attempted == 0)
        #expect(try await second.sendDue().attempted == 0)
        // Moved once, not twice: the hold ends an hour after it began, on the new timeline.
        #expect(try await second.status().retryAfterHoldUntilMilliseconds == hold - 1_800_000)
        clock.advance(milliseconds: hold - 1_800_000 - clock.wallClockMilliseconds - 1)
        #expect(try await second.sendDue().attempted == 0)
        clock.advance(milliseconds: 1)
        #expect(try await second.sendDue().delivered == 1)
        try await first.close()
        try await second.close()
    }

    @Test func theSystemClockBasesTheQueueOnThisBootsMonotonicClock() async throws {
        let directory = try TemporaryDirectory()
        var configuration = UploaderConfiguration(
            endpoint: "http://127.0.0.1:9", appId: "test-app", dataDirectory: directory.path)
        configuration.clock = .system
        let uploader = try await Uploader(configuration: configuration)
        try await uploader.record(.log(LogEntry(body: "x")))
        let (timeline, offset) = try await uploader.executor.read { connection in
            (
                try QueueSettings.string(connection, QueueClockBase.timelineSetting),
                try QueueSettings.integer(connection, QueueClockBase.offsetSetting)
            )
        }
        let boot = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
        #expect(timeline == "boot:" + boot.trimmingASCIIWhitespace())
        let expected = UploaderClock.system.nowMilliseconds() - (UploaderClock.system.monotonicMilliseconds() ?? 0)
        #expect(abs((offset ?? 0) - expected) < QueueClockBase.toleranceMilliseconds)
        try await uploader.close()
    }

    @Test func aForwardStepOfEightDaysDoesNotAgeQueuedRecords() async throws {
        let server = try FaultServer(fallback: .ok)
        let directory = try TemporaryDirectory()
        let clock = ManualClock(now: .seconds(5_000))
        let uploader = try await Self.open(directory, clock, endpoint: server.baseURL)
        try await uploader.record(.log(LogEntry(body: "waiting")))
        try await uploader.record(.crash(CrashReport(message: "sealed")))
        clock.stepWallClock(by: 8 * 86_400_000)
        let report = try await uploader.flush()
        #expect(report.delivered == 2)
        #expect(try await uploader.status().drops[.age]?.records == 0)
        try await uploader.close()
    }
}

/// `flush` sends every sealed batch now and says what is left.
@Suite struct FlushTests {
    @Test func flushSendsBatchesInBackoffAndReportsNothingLeft() async throws {
        let server = try FaultServer(script: [.respond(status: 500)], fallback: .ok)
        let fixture = try UploaderFixture(sendingTo: server, policy: oneBatchPerRecordOneInFlight)
        let uploader = try await fixture.open()
        try await uploader.record(.log(LogEntry(body: "a")))
        #expect(try await uploader.sendDue().retrying == 1)  // 500: the endpoint backs off
        try await uploader.record(.log(LogEntry(body: "b")))
        #expect(try await uploader.sendDue().attempted == 0)  // both wait for the endpoint
        // Without moving the clock, flush sends both now, oldest first.
        var report = try await uploader.flush()
        #expect(report.delivered == 2)
        #expect(report.remainingBatches == 0)
        #expect(try await uploader.storedBatches().isEmpty)
        // A batch in its own backoff (404) goes too.
        server.enqueue([.respond(status: 404)])
        try await uploader.record(.log(LogEntry(body: "c")))
        #expect(try await uploader.sendDue().retrying == 1)
        #expect(try await uploader.storedBatches().first?.nextAttemptMilliseconds ?? 0 > fixture.clock.milliseconds)
        report = try await uploader.flush()
        #expect(report.delivered == 1)
        #expect(report.remainingBatches == 0)
        let paths = server.requests.map(\.path)
        #expect(paths.count == 5)
        try await uploader.close()
    }

    @Test func flushAgainstADownEndpointStopsAtTheFirstFailureAndCountsWhatIsLeft() async throws {
        let server = try FaultServer(fallback: .dropAfterRequest)
        let fixture = try UploaderFixture(sendingTo: server) { policy in
            policy.maximumBatchRecords = 1
        }
        let uploader = try await fixture.open()
        try await queueLogs(uploader, 4)
        let report = try await uploader.flush()
        #expect(report.delivered == 0)
        #expect(report.remainingBatches == 4)
        #expect(report.blockedBy == "endpointBackoff")
        #expect(server.requests.count <= UploadPolicy().maximumInFlight)
        try await uploader.close()
    }
}

/// The `Retry-After` cap includes the jitter.
@Suite struct RetryAfterCapTests {
    @Test(arguments: ["Fri, 31 Dec 2099 23:59:59 GMT", "999999999"])
    func aFarFutureRetryAfterHoldsTheQueueAtMost24Hours(value: String) async throws {
        let server = try FaultServer(script: [.respond(status: 429, headers: ["Retry-After": value])])
        let fixture = try UploaderFixture(sendingTo: server)
        let uploader = try await fixture.open()
        try await uploader.record(.log(LogEntry(body: "x")))
        try await uploader.seal(.flush)
        let now = fixture.clock.milliseconds
        #expect(try await uploader.sendDue().retrying == 1)
        let status = try await uploader.status()
        let hold = try #require(status.retryAfterHoldUntilMilliseconds)
        #expect(hold - now <= RetryAfter.maximumMilliseconds)
        #expect(hold - now > RetryAfter.maximumMilliseconds - 1_000)
        let batch = try #require(try await uploader.storedBatches().first)
        #expect(batch.nextAttemptMilliseconds - now <= RetryAfter.maximumMilliseconds)
        try await uploader.close()
    }
}

/// One limit for a record: what the gateway forwards as one Pulse event.
@Suite struct RecordLimitTests {
    @Test func anAttachmentOverTheSharedLimitIsRefusedAtEnqueueNamingTheLimit() async throws {
        let fixture = try UploaderFixture()
        let uploader = try await fixture.open()
        #expect(uploader.policy.maximumAttachmentBytes == PulseLimits.attachmentMaxBytes)
        let path = fixture.directory.path + "/big.bin"
        try Data(repeating: 0x41, count: PulseLimits.attachmentMaxBytes + 1).write(to: URL(fileURLWithPath: path))
        let error = await #expect(throws: UploaderError.self) {
            try await uploader.record(.attachment(Attachment(path: path)))
        }
        #expect(error?.code == .oversized)
        #expect(error?.message.contains("\(PulseLimits.attachmentMaxBytes)") == true)
        #expect(try await uploader.status().drops[.oversized]?.records == 1)
        // A policy cannot promise more than the gateway forwards.
        var policy = UploadPolicy()
        policy.maximumAttachmentBytes = 4 * 1024 * 1024
        #expect(throws: UploaderError.self) { try policy.validate() }
        try await uploader.close()
    }

    @Test func anyEventRecordLargerThanAPulseEventIsRefusedAtEnqueue() async throws {
        let fixture = try UploaderFixture()
        let uploader = try await fixture.open()
        let error = await #expect(throws: UploaderError.self) {
            try await uploader.record(paddedEvent(size: PulseLimits.eventMaxBytes + 100))
        }
        #expect(error?.code == .oversized)
        #expect(error?.message.contains("\(PulseLimits.eventMaxBytes)") == true)
        try await uploader.record(paddedEvent(size: PulseLimits.eventMaxBytes - 500))
        #expect(try await uploader.status().totalRecords == 1)
        try await uploader.close()
    }
}

/// Explicit values win over the remote policy, which wins over the configuration and the defaults.
@Suite struct PolicyPrecedenceTests {
    @Test func anExplicitValueSurvivesARemotePolicyAndStatusShowsEachSource() async throws {
        let server = PolicyServer()
        server.serve(
            #"{"revision":3,"maxBatchAgeMs":3600000,"queueByteCap":1048576,"sealIntervalMs":15500,"batchMaxEvents":10,"batchMaxBytes":32768,"diagnosticsLevel":"callDetails"}"#
        )
        var fixture = try UploaderFixture()
        fixture.transport = server
        fixture.policy.sealIntervalMilliseconds = 2_000
        fixture.policy.leaseMilliseconds = 30_000
        fixture.explicitPolicy = [.sealIntervalMilliseconds]
        let uploader = try await fixture.open()
        #expect(try await uploader.refreshPolicy() == .applied(revision: 3))
        #expect(uploader.policy.sealIntervalMilliseconds == 2_000)
        #expect(uploader.policy.maximumBatchRecords == 10)
        let settings = Dictionary(
            uniqueKeysWithValues: try await uploader.status().policySettings.map { ($0.name, $0) })
        #expect(settings["sealIntervalMilliseconds"]?.value == "2000")
        #expect(settings["sealIntervalMilliseconds"]?.source == .explicit)
        #expect(settings["maximumBatchRecords"]?.value == "10")
        #expect(settings["maximumBatchRecords"]?.source == .remote)
        #expect(settings["leaseMilliseconds"]?.source == .configuration)
        #expect(settings["backoffCapMilliseconds"]?.source == .default)
        #expect(settings.count == UploadPolicy.Field.allCases.count)
        try await uploader.close()
        // A restart re-applies the stored remote policy under the same precedence.
        let reopened = try await fixture.open()
        #expect(reopened.policy.sealIntervalMilliseconds == 2_000)
        #expect(reopened.policy.maximumBatchRecords == 10)
        try await reopened.close()
        // Without the explicit mark the remote value wins.
        fixture.explicitPolicy = []
        let plain = try await fixture.open()
        #expect(plain.policy.sealIntervalMilliseconds == 15_500)
        try await plain.close()
    }
}

/// Queues `count` log records `0`, `1`, … (one batch each under `maximumBatchRecords = 1`).
func queueLogs(_ uploader: Uploader, _ count: Int) async throws {
    for index in 0..<count {
        try await uploader.record(.log(LogEntry(body: "\(index)")))
    }
}

/// One batch per record, one upload at a time: the order of requests is the order of batches.
func oneBatchPerRecordOneInFlight(_ policy: inout UploadPolicy) {
    policy.maximumBatchRecords = 1
    policy.maximumInFlight = 1
}
