import MsgTrans
import MsgTransRuntime
import PulseKit
import PulseStorage
import PulseTestSupport
import Synchronization
import Testing

@testable import PulseGateway

/// The forward window against a raw msgtrans upstream that sees the wire bytes: up to 8 requests
/// in flight on one identity's connection, FIFO hand-over, a failed row resent before anything
/// newer, no row deleted without `{"code":0,"data":true}`, and every retry byte-identical to the
/// stored row.
@Suite struct ForwardWindowTests {
    struct StoredRow: Sendable {
        var batchID: String
        var payload: [UInt8]
        var compression: UInt8
    }

    /// A data directory whose outbox holds `count` event rows of one identity (each at least the
    /// compression threshold, so stored as one zstd frame), written by a gateway without upstream.
    static func prefilled(_ count: Int) async throws -> (TemporaryDirectory, [StoredRow]) {
        let harness = try await GatewayHarness.start()
        for index in 0..<count {
            let body = OTLP.logs(
                records: (0..<10).map {
                    OTLP.record(1_700_000_000 + $0, attributes: [OTLP.string("log.record.uid", "u-\(index)-\($0)")])
                })
            #expect(try await harness.post(body, batchID: "w-\(index)").status == 200)
        }
        await harness.stop(removing: false)
        let connection = try SQLiteConnection(path: harness.directory.path + "/" + GatewayStore.fileName)
        let rows = try connection.query("SELECT pulse_batch_id, payload, compression FROM outbox ORDER BY seq") {
            StoredRow(
                batchID: try $0.column(0), payload: try $0.column(1),
                compression: UInt8(try $0.column(2, as: Int.self)))
        }
        try connection.close()
        #expect(rows.count == count)
        #expect(rows.allSatisfy { $0.compression == Compression.zstd.rawValue })
        return (harness.directory, rows)
    }

    static func forwarding(window: Int = 8) -> ForwardingSettings {
        ForwardingSettings(backoffBase: .seconds(1), backoffMax: .seconds(60), forwardWindow: window)
    }

    /// A gateway on `directory` forwarding to `upstream` with ``forwarding(window:)``'s settings,
    /// the global in-flight bound at `maxInFlight`.
    static func forwarder(
        _ directory: TemporaryDirectory, to upstream: RawUpstream, maxInFlight: Int
    ) async throws -> GatewayHarness {
        var forwarding = forwarding()
        forwarding.maxInFlight = maxInFlight
        return try await GatewayHarness.start(
            directory: directory, connector: connector(upstream.port), forwarding: forwarding)
    }

    static func connector(_ port: Int) -> PulseClientUpstreamConnector {
        PulseClientUpstreamConnector(
            host: "127.0.0.1", port: port, requestTimeout: .seconds(2), connectTimeout: .seconds(5),
            maxInFlightPerConnection: 8)
    }

    /// Steps the injected clock until the outbox is empty.
    static func drain(_ harness: GatewayHarness) async -> Bool {
        await eventually(within: .seconds(60)) {
            harness.clock.advance(milliseconds: 2_000)
            harness.gateway.pokeForwarder()
            return harness.gateway.outboxBatches == 0
        }
    }

    @Test func aWindowOfEightIsInFlightAndEveryRetryIsByteIdenticalToTheStoredRow() async throws {
        let (directory, stored) = try await Self.prefilled(16)
        defer { directory.remove() }
        let failing = stored[2].batchID
        let upstream = RawUpstream.start(holdUploads: 8) { received in
            received.batchID == failing && received.attempt <= 2 ? .code(503) : .accept
        }
        defer { upstream.stop() }
        let harness = try await GatewayHarness.start(
            directory: directory, connector: Self.connector(upstream.port), forwarding: Self.forwarding(),
            random: RandomSource.half)
        #expect(await Self.drain(harness))
        // Eight requests were in flight on the connection at once.
        #expect(upstream.peakOutstanding == 8)
        let uploads = upstream.uploads
        #expect(uploads.filter { $0.batchID == failing }.count == 3)
        #expect(Set(uploads.compactMap(\.batchID)) == Set(stored.map(\.batchID)))
        // On the wire: the stored compression byte and payload bytes, on every attempt.
        let byID = Dictionary(uniqueKeysWithValues: stored.map { ($0.batchID, $0) })
        for upload in uploads {
            let row = try #require(upload.batchID.flatMap { byID[$0] })
            #expect(upload.compression.rawValue == row.compression)
            #expect(upload.wirePayload == row.payload, "batch \(row.batchID) attempt \(upload.attempt)")
        }
        #expect(upstream.received.filter { $0.bizType == 1 }.count == 1)
        await harness.stop(removing: false)
    }

    enum Failure: String, CaseIterable, Sendable {
        case unavailable, timeout, disconnect, unauthorized, conflict

        var action: RawUpstream.Action {
            switch self {
            case .unavailable: .code(503)
            case .timeout: .noAnswer
            case .disconnect: .disconnect
            case .unauthorized: .code(401)
            case .conflict: .code(409)
            }
        }

        /// Whether the row waits for its backoff (else it is resent at once, alone).
        var backsOff: Bool { self == .unavailable || self == .timeout || self == .disconnect }
    }

    @Test func theWindowSlidesAnAnswerLetsTheNextRowGoWhileOlderOnesAreStillInFlight() async throws {
        let (directory, stored) = try await Self.prefilled(12)
        defer { directory.remove() }
        let held = Set(stored[1..<8].map(\.batchID))
        let next = stored[8].batchID
        struct Seen {
            var next = false
            var decisions = 0
            var heldAnsweredBeforeNext = false
        }
        let seen = Mutex(Seen())
        let upstream = RawUpstream.start(holdUploads: 8) { received in
            // Row 0 is answered at once; rows 1-7 stay unanswered until row 8 arrived, which only
            // a sliding window sends (a window that waits for all of its answers never does; after
            // 200 decisions they are answered anyway, and the test fails below).
            seen.withLock { seen in
                seen.decisions += 1
                if received.batchID == next { seen.next = true }
                guard let id = received.batchID, held.contains(id) else { return .accept }
                if seen.next { return .accept }
                if seen.decisions > 200 {
                    seen.heldAnsweredBeforeNext = true
                    return .accept
                }
                return .later
            }
        }
        defer { upstream.stop() }
        let harness = try await GatewayHarness.start(
            directory: directory, connector: Self.connector(upstream.port), forwarding: Self.forwarding())
        #expect(await Self.drain(harness))
        #expect(seen.withLock { $0.next && !$0.heldAnsweredBeforeNext }, "row 8 waited for rows 1-7's answers")
        // Row 8 arrived while rows 1-7 were outstanding: eight in flight, never more.
        #expect(upstream.peakOutstanding == 8)
        #expect(upstream.uploads.compactMap(\.batchID) == stored.map(\.batchID))
        #expect(upstream.received.filter { $0.bizType == 1 }.count == 1)
        await harness.stop(removing: false)
    }

    /// Crash batches keep their priority under a sliding window: a crash batch committed while a
    /// window of event rows is in flight goes out before any event row the window had not sent yet.
    @Test func aCrashBatchCommittedDuringAWindowGoesOutBeforeTheRowsTheWindowHadNotSent() async throws {
        let (directory, stored) = try await Self.prefilled(24)
        defer { directory.remove() }
        let release = Atomic<Bool>(false)
        let upstream = RawUpstream.start(holdUploads: 8) { _ in
            release.load(ordering: .acquiring) ? .accept : .later
        }
        defer { upstream.stop() }
        let connector = PulseClientUpstreamConnector(
            host: "127.0.0.1", port: upstream.port, requestTimeout: .seconds(30), connectTimeout: .seconds(5),
            maxInFlightPerConnection: 8)
        let harness = try await GatewayHarness.start(
            directory: directory, connector: connector, forwarding: Self.forwarding())
        // The first window (rows 0-7) is on the wire, unanswered.
        #expect(
            await eventually(within: .seconds(30)) {
                harness.gateway.pokeForwarder()
                return upstream.peakOutstanding == 8
            })
        #expect(upstream.uploads.compactMap(\.batchID) == stored[0..<8].map(\.batchID))
        #expect(try await harness.post(ForwarderTests.crashBody, batchID: "crash-during-window").status == 200)
        release.store(true, ordering: .releasing)
        #expect(await Self.drain(harness))
        let uploads = upstream.uploads
        let crash = try #require(uploads.firstIndex { $0.bizType == 4 })
        let firstUnsent = try #require(uploads.firstIndex { $0.batchID == stored[8].batchID })
        #expect(crash < firstUnsent, "\(uploads.map { $0.batchID ?? "biz \($0.bizType)" })")
        // Every stored row still arrived, once each (nothing failed, nothing was resent).
        #expect(Set(uploads.compactMap(\.batchID)).isSuperset(of: stored.map(\.batchID)))
        #expect(uploads.allSatisfy { $0.attempt == 1 })
        await harness.stop(removing: false)
    }

    @Test(arguments: Failure.allCases)
    func aFailedRowIsResentBeforeAnyNewerRowAndNothingIsDeletedUnaccepted(failure: Failure) async throws {
        let (directory, stored) = try await Self.prefilled(16)
        defer { directory.remove() }
        let k = 3
        let window = 8
        let failing = stored[k].batchID
        let accepted = Mutex<[String]>([])
        let upstream = RawUpstream.start(holdUploads: 8) { received in
            let action: RawUpstream.Action =
                received.batchID == failing && received.attempt == 1 ? failure.action : .accept
            if action == .accept, let id = received.batchID { accepted.withLock { $0.append(id) } }
            return action
        }
        defer { upstream.stop() }
        let clock = ManualClock()
        let harness = try await GatewayHarness.start(
            directory: directory, clock: clock, connector: Self.connector(upstream.port),
            forwarding: Self.forwarding(), random: RandomSource.half)
        let path = directory.path + "/" + GatewayStore.fileName
        let outbox: @Sendable () throws -> [String: Int] = {
            let connection = try SQLiteConnection(path: path)
            defer { try? connection.close() }
            return Dictionary(
                uniqueKeysWithValues: try connection.query("SELECT pulse_batch_id, attempts FROM outbox") {
                    (try $0.column(0, as: String.self), try $0.column(1, as: Int.self))
                })
        }
        if failure.backsOff {
            // The window slid while row k was unanswered, but never past row k + window - 1; the
            // failed row is still in the outbox, waiting for its backoff on the injected clock.
            #expect(await eventually(within: .seconds(30)) { (try? outbox())?[failing] == 1 })
            #expect(await harness.forwarderSettles())
            #expect(
                upstream.uploads.allSatisfy { upload in
                    stored.prefix(k + window).contains { $0.batchID == upload.batchID }
                })
            #expect(try outbox()[failing] == 1)
        }
        #expect(await Self.drain(harness))
        let order = upstream.uploads.compactMap(\.batchID)
        let index = Dictionary(uniqueKeysWithValues: stored.enumerated().map { ($0.element.batchID, $0.offset) })
        let firstFailure = try #require(order.firstIndex(of: failing))
        let resend = try #require(order[(firstFailure + 1)...].firstIndex(of: failing))
        // Between the failure and its resend only rows sent before the failure was known arrive:
        // never one `window` or more places behind row k (the window is anchored at the oldest
        // unanswered row).
        for id in order[(firstFailure + 1)..<resend] {
            #expect(
                index[id]! < k + window, "row \(index[id]!) was sent between row \(k)'s failure and its resend")
        }
        // Every row at or beyond k + window arrives for the first time after the resend, and
        // every row is sent once more at most after its first send (only row k fails).
        let firstArrival = Dictionary(order.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: min)
        for row in stored[(k + window)...] {
            #expect(firstArrival[row.batchID]! > resend)
        }
        // First sends are in FIFO order.
        let firsts = stored.map { firstArrival[$0.batchID]! }
        #expect(firsts == firsts.sorted())
        // Every row left the outbox only after the upstream accepted it.
        #expect(Set(accepted.withLock { $0 }) == Set(stored.map(\.batchID)))
        #expect(harness.gateway.outboxBatches == 0)
        await harness.stop(removing: false)
    }

    @Test func theWindowIsConfigurableFromOneToSixtyFour() throws {
        for window in [1, 8, 64] {
            #expect(throws: Never.self) { try Self.forwarding(window: window).validate() }
        }
        for window in [0, 65] {
            #expect(throws: GatewayError.self) { try Self.forwarding(window: window).validate() }
        }
        let file = try ConfigurationFile(parsing: Array(#"{"forwarding":{"forwardWindow":16}}"#.utf8))
        var configuration = GatewayConfiguration(dataDirectory: "/tmp")
        file.apply(to: &configuration)
        #expect(configuration.forwarding.forwardWindow == 16)
    }

    @Test func theGlobalInFlightBoundCapsAWindowAndTheWindowStillDrains() async throws {
        let (directory, stored) = try await Self.prefilled(12)
        defer { directory.remove() }
        let upstream = RawUpstream.start(holdUploads: 2)
        defer { upstream.stop() }
        let harness = try await Self.forwarder(directory, to: upstream, maxInFlight: 2)
        #expect(await Self.drain(harness))
        // Two permits of the global bound: never more than two of the window's eight in flight.
        #expect(upstream.peakOutstanding == 2)
        #expect(upstream.uploads.compactMap(\.batchID) == stored.map(\.batchID))
        await harness.stop(removing: false)
    }

    @Test func manyWindowsSharingASmallGlobalBoundAllDrainAndNoPermitIsLost() async throws {
        // 40 identities with 4 rows each, written by a gateway without upstream.
        let filler = try await GatewayHarness.start()
        for round in 0..<4 {
            #expect(try await filler.post(UpstreamContractTests.devices(40), batchID: "many-\(round)").status == 200)
        }
        await filler.stop(removing: false)
        let directory = filler.directory
        defer { directory.remove() }
        let upstream = RawUpstream.start()
        defer { upstream.stop() }
        let harness = try await Self.forwarder(directory, to: upstream, maxInFlight: 3)
        #expect(await Self.drain(harness))
        let uploads = upstream.uploads.compactMap(\.batchID)
        #expect(uploads.count == 160)
        #expect(Set(uploads).count == 160)
        // The forwarder still holds all three permits: a second fill drains as well.
        for round in 4..<6 {
            #expect(try await harness.post(UpstreamContractTests.devices(40), batchID: "many-\(round)").status == 200)
        }
        #expect(await Self.drain(harness))
        #expect(Set(upstream.uploads.compactMap(\.batchID)).count == 240)
        await harness.stop(removing: false)
    }

    @Test func aWindowOfOneSendsOneRequestAtATime() async throws {
        let (directory, stored) = try await Self.prefilled(4)
        defer { directory.remove() }
        let upstream = RawUpstream.start(holdUploads: 2)
        defer { upstream.stop() }
        let harness = try await GatewayHarness.start(
            directory: directory, connector: Self.connector(upstream.port), forwarding: Self.forwarding(window: 1))
        #expect(await Self.drain(harness))
        #expect(upstream.peakOutstanding == 1)
        #expect(upstream.uploads.compactMap(\.batchID) == stored.map(\.batchID))
        await harness.stop(removing: false)
    }
}

/// The scheduler's ready queue: waking for one due identity costs that identity, not a scan of
/// every identity the forwarder knows.
@Suite struct ReadyQueueTests {
    @Test func theHeapYieldsDeadlinesInOrderAndTheQueueIsFIFO() {
        var heap = DeadlineHeap()
        for (deadline, key) in [(50, "e"), (10, "a"), (40, "d"), (20, "b"), (30, "c"), (10, "a2")] {
            heap.push(Int64(deadline), key)
        }
        #expect(heap.popDue(now: 5) == nil)
        var popped: [Int64] = []
        while let (deadline, _) = heap.popDue(now: 35) { popped.append(deadline) }
        #expect(popped == [10, 10, 20, 30])
        #expect(heap.count == 2)
        var queue = FIFO<String>()
        for index in 0..<3000 { queue.append("k\(index)") }
        var order: [String] = []
        while let key = queue.popFirst() { order.append(key) }
        #expect(order == (0..<3000).map { "k\($0)" })
        #expect(queue.count == 0)
    }

    /// A gateway whose upstream does not listen, after `body` (of `identities` identities) was
    /// accepted and every identity's first connect failed: each backs off on the injected clock,
    /// which moves only when the test advances it. `retries` counts the "will retry" lines.
    private static func backedOff(
        _ body: String, identities: Int, forwarding: ForwardingSettings
    ) async throws -> (harness: GatewayHarness, forwarder: Forwarder, retries: @Sendable () -> Int) {
        let (harness, _) = try await ForwarderTests.harnessWithoutUpstream(forwarding: forwarding)
        let retries: @Sendable () -> Int = { harness.logs.all.filter { $0.contains("will retry") }.count }
        #expect(try await harness.post(body).status == 200)
        #expect(await eventually(within: .seconds(60)) { retries() >= identities })
        return (harness, try #require(harness.gateway.forwarder), retries)
    }

    @Test func identitiesInBackoffAreNotRescannedOnEveryWake() async throws {
        let (harness, forwarder, retries) = try await Self.backedOff(
            UpstreamContractTests.devices(300), identities: 300,
            forwarding: ForwardingSettings(backoffBase: .seconds(10), backoffMax: .seconds(60)))
        let clock = harness.clock
        let before = forwarder.schedulerVisits
        // Twenty new identities, one request each: each wake starts the new one only.
        for index in 0..<20 {
            #expect(try await harness.post(UpstreamContractTests.devices(1, from: 1000 + index)).status == 200)
            #expect(await eventually(within: .seconds(30)) { retries() >= 301 + index })
        }
        let visits = forwarder.schedulerVisits - before
        #expect(visits >= 20)
        #expect(visits < 300, "the scheduler looked at \(visits) identities for 20 due ones")
        // The backed-off identities still come due when the clock reaches them.
        clock.advance(milliseconds: 10_000)
        harness.gateway.pokeForwarder()
        #expect(await eventually(within: .seconds(60)) { retries() >= 640 })
        await harness.stop()
    }

    @Test func batchesOfAnIdentityInBackoffAddNoSchedulerWork() async throws {
        // The clock is advanced by less than the rescan interval, so the waiting heap is not
        // rebuilt in between.
        let (harness, forwarder, retries) = try await Self.backedOff(
            UpstreamContractTests.devices(1), identities: 1,
            forwarding: ForwardingSettings(backoffBase: .seconds(5), backoffMax: .seconds(10)))
        let before = forwarder.schedulerVisits
        // Twenty more batches of the same identity while it waits: each is announced, none adds a
        // second entry for the same time to the waiting heap (nor wakes the scheduler for nothing).
        for index in 0..<20 {
            #expect(
                try await harness.post(UpstreamContractTests.devices(1), batchID: "again-\(index)").status == 200)
        }
        #expect(forwarder.schedulerVisits == before)
        // Its backoff ends: the identity is tried again, from one heap entry.
        harness.clock.advance(milliseconds: 10_001)
        #expect(await eventually(within: .seconds(30)) { retries() >= 2 })
        let visits = forwarder.schedulerVisits - before
        #expect(visits >= 1)
        #expect(visits < 10, "the scheduler looked at \(visits) entries for one identity that came due")
        await harness.stop()
    }
}
