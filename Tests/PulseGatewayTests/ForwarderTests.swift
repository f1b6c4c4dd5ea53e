import OTLPProtobuf
import PulseHashing
import PulseJSON
import PulseKit
import PulseStorage
import PulseTestSupport
import Testing

@testable import PulseGateway

/// The forwarder against a real msgtrans server answering from a script.
@Suite struct ForwarderTests {
    static let body = OTLP.logs(records: [
        OTLP.record(1_700_000_000, attributes: [OTLP.string("log.record.uid", "u-1")])
    ])
    static let crashBody = OTLP.logs(records: [
        OTLP.record(1_700_000_000, attributes: [OTLP.string("log.record.uid", "u-0")]),
        OTLP.record(
            1_700_000_001, attributes: [OTLP.string("app.crash.id", "c-1"), OTLP.string("exception.type", "X")]),
    ])

    /// The Pulse client connector to a loopback upstream on `port`.
    static func connector(_ port: Int) -> PulseClientUpstreamConnector {
        PulseClientUpstreamConnector(
            host: "127.0.0.1", port: port, requestTimeout: .seconds(5), connectTimeout: .seconds(5))
    }

    static func harness(
        _ upstream: ScriptedUpstream, clock: ManualClock = ManualClock(),
        forwarding: ForwardingSettings = ForwardingSettings(backoffBase: .seconds(1), backoffMax: .seconds(60)),
        policy: GatewayPolicy = GatewayPolicy(), random: RandomSource = .half
    ) async throws -> GatewayHarness {
        try await GatewayHarness.start(
            policy: policy, clock: clock, connector: connector(upstream.port),
            forwarding: forwarding, random: random)
    }

    @Test func acceptedBatchIsForwardedAfterConnectAndDeleted() async throws {
        let upstream = try await ScriptedUpstream.start()
        let harness = try await Self.harness(upstream)
        #expect(try await harness.post(Self.body, batchID: "f-1").status == 200)
        #expect(await eventually { harness.gateway.outboxBatches == 0 })
        let received = upstream.received
        #expect(received.map(\.bizType) == [1, 5])
        let expected = try OTLP.map(
            Self.body, signal: .logs, batchID: "f-1", receivedAt: harness.clock.wallClockMilliseconds)
        #expect(received[0].payload == expected.drafts[0].identity)
        #expect(received[1].payload == expected.drafts[0].payload)
        #expect(harness.gateway.forwarder?.openConnections == 1)
        await harness.stop()
        await upstream.stop()
    }

    @Test func crashBatchesGoFirst() async throws {
        let upstream = try await ScriptedUpstream.start()
        let harness = try await Self.harness(upstream)
        #expect(try await harness.post(Self.crashBody).status == 200)
        #expect(await eventually { harness.gateway.outboxBatches == 0 })
        #expect(upstream.uploads.map(\.bizType) == [4, 5])
        #expect(upstream.uploads[0].text.contains(#""crashes":[{"crashId":"c-1""#))
        await harness.stop()
        await upstream.stop()
    }

    @Test(arguments: [400, 403, 404])
    func refusedBatchesAreDeadLetteredAndCanBeRequeued(code: Int) async throws {
        let upstream = try await ScriptedUpstream.start(uploadCodes: [code])
        let harness = try await Self.harness(upstream)
        #expect(try await harness.post(Self.body, batchID: "dl-1").status == 200)
        // The in-memory depth is updated just after the dead-letter commit returns: wait for both.
        #expect(
            await eventually {
                (try? await harness.gateway.store.deadLetterCount()) == 1 && harness.gateway.outboxBatches == 0
            },
            // Seen once in ten loaded whole-suite runs (code 404) and not reproduced since: say what the
            // forwarder and the upstream did if it happens again.
            "upstream received \(upstream.received.map(\.bizType)); gateway log:\n\(harness.logs.all.joined(separator: "\n"))"
        )
        let letters = try await harness.gateway.store.deadLetters()
        #expect(letters.map(\.code) == [code])
        #expect(letters.map(\.httpBatchID) == ["dl-1"])
        #expect(letters.map(\.message) == ["scripted \(code)"])
        let summaries = try await harness.gateway.store.appSummaries()
        #expect(summaries.map(\.deadLetters) == [1])
        #expect(try await harness.gateway.store.requeue(now: harness.clock.wallClockMilliseconds) == 1)
        harness.gateway.pokeForwarder()
        #expect(await eventually { harness.gateway.outboxBatches == 0 && upstream.uploads.count == 2 })
        #expect(try await harness.gateway.store.deadLetterCount() == 0)
        await harness.stop()
        await upstream.stop()
    }

    @Test func retryableCodesBackOffOnTheInjectedClock() async throws {
        let upstream = try await ScriptedUpstream.start(uploadCodes: [429, 503])
        let clock = ManualClock()
        let harness = try await Self.harness(upstream, clock: clock)
        #expect(try await harness.post(Self.body).status == 200)
        #expect(await eventually { upstream.uploads.count == 1 })
        // Full jitter with the random source fixed at 0.5: 0.5 × 1 s after the first failure.
        let path = harness.directory.path + "/" + GatewayStore.fileName
        let readRow: @Sendable () throws -> (Int, Int64)? = {
            try SQLiteConnection(path: path).queryFirst("SELECT attempts, next_attempt_at FROM outbox") {
                (try $0.column(0, as: Int.self), try $0.column(1, as: Int64.self))
            }
        }
        #expect(await eventually { (try? readRow())??.0 == 1 })
        #expect(try readRow()?.1 == clock.wallClockMilliseconds + 500)
        // Nothing is sent before the clock reaches it: the scheduler looks again and starts nothing.
        clock.advance(milliseconds: 499)
        #expect(await harness.forwarderSettles())
        #expect(upstream.uploads.count == 1)
        clock.advance(milliseconds: 1)
        #expect(await eventually { (try? readRow())??.0 == 2 })
        // Second failure: 0.5 × 2 s.
        #expect(try readRow()?.1 == clock.wallClockMilliseconds + 1000)
        clock.advance(milliseconds: 1000)
        harness.gateway.pokeForwarder()
        #expect(await eventually { harness.gateway.outboxBatches == 0 })
        #expect(upstream.uploads.count == 3)
        await harness.stop()
        await upstream.stop()
    }

    @Test func crashUploadAnswered501FallsBackToCrashEvents() async throws {
        let upstream = try await ScriptedUpstream.start(uploadCodes: [501])
        let harness = try await Self.harness(upstream)
        #expect(try await harness.post(Self.crashBody).status == 200)
        #expect(await eventually { harness.gateway.outboxBatches == 0 })
        let uploads = upstream.uploads
        #expect(uploads.map(\.bizType) == [4, 5, 5])
        let crashEventID = "crash-" + SHA256.hexDigest(Array("c-1".utf8))
        #expect(
            uploads[1].text.contains(
                #""events":[{"id":"\#(crashEventID)","timestamp":1700000001000,"sessionId":"","kind":"Crash""#))
        #expect(uploads[2].text.contains(#""id":"u-0""#))
        #expect(try await harness.gateway.store.deadLetterCount() == 0)
        await harness.stop()
        await upstream.stop()
    }

    @Test func unauthorizedReconnectsAndConflictPullsConfigThenRetries() async throws {
        let upstream = try await ScriptedUpstream.start(uploadCodes: [401, 409])
        let harness = try await Self.harness(upstream)
        #expect(try await harness.post(Self.body).status == 200)
        #expect(await eventually { harness.gateway.outboxBatches == 0 })
        // CONNECT, upload (401), CONNECT again, upload (409), CONFIG_PULL, upload (ok).
        #expect(upstream.received.map(\.bizType) == [1, 5, 1, 5, 3, 5])
        await harness.stop()
        await upstream.stop()
    }

    /// A gateway on a test clock whose upstream port nothing listens on (every connect fails at
    /// once), and that port.
    static func harnessWithoutUpstream(forwarding: ForwardingSettings) async throws -> (GatewayHarness, Int) {
        let port = try await ScriptedUpstream.freePort()
        let connector = PulseClientUpstreamConnector(
            host: "127.0.0.1", port: port, requestTimeout: .seconds(2), connectTimeout: .seconds(2))
        let harness = try await GatewayHarness.start(
            clock: ManualClock(), connector: connector, forwarding: forwarding, random: RandomSource.half)
        return (harness, port)
    }

    @Test func outageKeepsRowsAndTheyDrainWhenTheUpstreamReturns() async throws {
        // A window of 1: this server handles the requests of a connection concurrently, so only one
        // in flight makes its processing order the send order (the window's wire order is
        // ForwardWindowTests' business).
        let (harness, port) = try await Self.harnessWithoutUpstream(
            forwarding: ForwardingSettings(backoffBase: .milliseconds(100), forwardWindow: 1))
        let clock = harness.clock
        for index in 0..<3 {
            #expect(try await harness.post(Self.body, batchID: "o-\(index)").status == 200)
        }
        #expect(await eventually { harness.logs.all.contains { $0.contains("will retry") } })
        #expect(harness.gateway.outboxBatches == 3)
        let upstream = try await ScriptedUpstream.start(port: port)
        clock.advance(milliseconds: 60_000)
        harness.gateway.pokeForwarder()
        #expect(await eventually { harness.gateway.outboxBatches == 0 })
        // Strict FIFO per identity: the batches arrive in intake order.
        let ids = upstream.uploads.map { try? JSONValue.parse($0.payload)["batchId"] }
        let expected = (0..<3).map {
            JSONValue.string(String(OTLP.fieldHash(["shop", "o-\($0)", "0", "0"]).prefix(32)))
        }
        #expect(ids == expected)
        await harness.stop()
        await upstream.stop()
    }
}

@Suite struct DedupTests {
    @Test func deduplicationSurvivesARestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try await GatewayHarness.start(directory: directory)
        #expect(try await first.post(IntakeHTTPTests.body, batchID: "keep").header("Apsio-Duplicate") == nil)
        await first.stop(removing: false)
        let second = try await GatewayHarness.start(directory: directory)
        let replay = try await second.post(IntakeHTTPTests.body, batchID: "keep")
        #expect(replay.status == 200)
        #expect(replay.header("Apsio-Duplicate") == "true")
        #expect(second.gateway.outboxBatches == 1)
        await second.stop(removing: false)
    }

    @Test func expiredKeysArePrunedInSlicesAndThenAcceptedAgain() async throws {
        let clock = ManualClock()
        let day: Int64 = 24 * 3600 * 1000
        let harness = try await GatewayHarness.start(
            policy: GatewayPolicy(dedupRetentionMilliseconds: 7 * day), clock: clock)
        for index in 0..<5 {
            #expect(try await harness.post(IntakeHTTPTests.body, batchID: "p-\(index)").status == 200)
        }
        clock.advance(milliseconds: 7 * day - 1)
        #expect(try await harness.gateway.pruneExpiredKeys() == 0)
        #expect(try await harness.post(IntakeHTTPTests.body, batchID: "p-0").header("Apsio-Duplicate") == "true")
        clock.advance(milliseconds: 1)
        // An expired key is new again even before pruning removes it.
        #expect(try await harness.post(IntakeHTTPTests.body, batchID: "p-0").header("Apsio-Duplicate") == nil)
        #expect(try await harness.gateway.pruneExpiredKeys() == 4)
        #expect(try IntakeHTTPTests.count("dedup", in: harness.directory) == 1)
        await harness.stop()
    }
}
