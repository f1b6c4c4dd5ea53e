import Foundation
import PulseGateway
import PulseIngest
import PulseTestSupport
import Synchronization
import Testing

/// Crash safety of the real `pulsegate serve` process: `kill -9` under concurrent load, restart on
/// the same data directory, and every batch that was answered 200 reaches the ingest server, once.
@Suite(.serialized) struct GatewayCrashTests {
    static let app = "crash-app"

    init() {
        // Writing to a gateway that was killed must fail with EPIPE, not kill the test runner.
        signal(SIGPIPE, SIG_IGN)
    }

    /// What the load clients saw: batch ids sent, those answered 200, and other statuses (negated
    /// when the answer carried `Retry-After`).
    final class LoadLedger: Sendable {
        private struct State {
            var attempted: [String] = []
            var acknowledged: [String] = []
            var otherStatuses: [Int] = []
        }
        private let state = Mutex(State())
        let stopping = Atomic<Bool>(false)

        func attempt(_ batchID: String) { state.withLock { $0.attempted.append(batchID) } }
        func acknowledge(_ batchID: String) { state.withLock { $0.acknowledged.append(batchID) } }
        func other(_ status: Int) { state.withLock { $0.otherStatuses.append(status) } }

        var attempted: [String] { state.withLock { $0.attempted } }
        var acknowledged: [String] { state.withLock { $0.acknowledged } }
        var otherStatuses: [Int] { state.withLock { $0.otherStatuses } }
    }

    static let recordsPerBatch = 3

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// A small logs batch whose records have the ids `<batchID>.0`, `.1`, `.2`; a device per client, so
    /// the gateway forwards over several identities in parallel.
    static func body(worker: Int, batchID: String) -> [UInt8] {
        let records = (0..<recordsPerBatch).map { Payload.uidRecord("\(batchID).\($0)") }
        let resource = Payload.iosResource(device: "crash-dev-\(worker)", installation: "crash-inst-\(worker)")
        return Array(Payload.logs(resource: resource, records: records).utf8)
    }

    static func eventIDs(of batchIDs: some Sequence<String>) -> Set<String> {
        Set(batchIDs.flatMap { batchID in (0..<recordsPerBatch).map { "\(batchID).\($0)" } })
    }

    static func headers(_ batchID: String) -> [(String, String)] {
        [("Content-Type", "application/json"), ("Apsio-App-Id", app), ("Apsio-Batch-Id", batchID)]
    }

    /// One client: a keep-alive connection posting new batches until the gateway dies or the
    /// ledger says stop.
    static func runClient(worker: Int, port: Int, ledger: LoadLedger) {
        guard let connection = try? RawHTTPConnection(port: port, receiveTimeoutSeconds: 20) else { return }
        defer { connection.close() }
        var sequence = 0
        while !ledger.stopping.load(ordering: .relaxed) {
            let batchID = "w\(worker)-\(sequence)"
            sequence += 1
            ledger.attempt(batchID)
            do {
                try post(worker: worker, batchID: batchID, on: connection, ledger: ledger)
            } catch {
                return  // the gateway was killed under us
            }
        }
    }

    /// Posts one batch on `connection` and records the answer in `ledger`.
    static func post(worker: Int, batchID: String, on connection: RawHTTPConnection, ledger: LoadLedger) throws {
        try connection.sendRequest(
            method: "POST", target: "/v1/logs", headers: headers(batchID), body: body(worker: worker, batchID: batchID))
        let response = try connection.readResponse()
        if response.status == 200 {
            ledger.acknowledge(batchID)
        } else {
            ledger.other(response.header("Retry-After") == nil ? response.status : -response.status)
        }
    }

    static let clients = 24

    /// Runs `clients` load clients, `client(worker)` each on a thread of its own, until they all return.
    static func startLoad(clients: Int, _ client: @escaping @Sendable (Int) -> Void) -> Task<Void, Never> {
        Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<clients {
                    group.addTask {
                        _ = try? await onThread { client(worker) }
                    }
                }
            }
        }
    }

    /// Starts ``clients`` clients posting to `port` until the gateway goes away or the ledger
    /// says stop.
    static func startLoad(port: Int, ledger: LoadLedger) -> Task<Void, Never> {
        startLoad(clients: clients) { worker in runClient(worker: worker, port: port, ledger: ledger) }
    }

    /// Returns 1 s after the first 200 (forwarding is busy by then), or sooner when the load is
    /// fast, or after 8 s on a very slow machine.
    static func waitForLoad(_ ledger: LoadLedger) async throws {
        let limit = ContinuousClock.now + .seconds(8)
        guard await eventually(within: .seconds(8), { ledger.acknowledged.count > 0 }) else { return }
        // The 1 s after the first 200 is how long the load runs (by design), cut short at 2000 acks.
        _ = await eventually(within: min(.milliseconds(1000), limit - ContinuousClock.now)) {
            ledger.acknowledged.count >= 2000
        }
    }

    static func writeConfig(_ root: ScratchDirectory) throws -> String {
        let config = root.path + "/gateway.json"
        try Data(
            #"{"logLevel":"info","forwarding":{"backoffBaseMs":50,"backoffMaxMs":1000,"requestTimeoutSeconds":5}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: config))
        return config
    }

    /// The built `pulsegate` and a scratch directory `root` (the caller removes it), the ingest
    /// fixture and a `pulsegate serve` process forwarding to it from `root`, with ``clients``
    /// clients posting to the gateway (``waitForLoad(_:)`` has returned); `loadStarted` is when the
    /// clients started.
    static func startUnderLoad(_ label: String) async throws -> (
        executable: String, root: ScratchDirectory, ingest: IngestFixture, config: String, dataDirectory: String,
        first: GatewayProcess, ledger: LoadLedger, load: Task<Void, Never>, loadStarted: ContinuousClock.Instant
    ) {
        let executable = try #require(builtPulsegateExecutable(), "build the pulsegate executable first")
        let root = try ScratchDirectory(label)
        do {
            let ingest = try await IngestFixture.start(directory: root.path + "/ingest")
            let config = try writeConfig(root)
            let dataDirectory = root.path + "/gateway"
            let first = try await GatewayProcess.start(
                executable: executable, dataDirectory: dataDirectory, upstream: ingest.address, config: config)
            let ledger = LoadLedger()
            let load = startLoad(port: first.port, ledger: ledger)
            let loadStarted = ContinuousClock.now
            do {
                try await waitForLoad(ledger)
            } catch {
                kill(first.process.processIdentifier, SIGKILL)
                throw error
            }
            return (executable, root, ingest, config, dataDirectory, first, ledger, load, loadStarted)
        } catch {
            root.remove()
            throw error
        }
    }

    @Test func killMinus9UnderLoadLosesNoAcknowledgedBatchAndDeliversEachOnce() async throws {
        // 24 concurrent keep-alive clients post small batches with unique batch ids.
        let (executable, root, ingest, config, dataDirectory, first, ledger, load, loadStarted) =
            try await Self.startUnderLoad("crash")
        defer { root.remove() }
        defer { if first.process.isRunning { kill(first.process.processIdentifier, SIGKILL) } }
        await first.killHard()
        ledger.stopping.store(true, ordering: .relaxed)
        await load.value
        let loadSeconds = Self.seconds(ContinuousClock.now - loadStarted)
        #expect(first.process.terminationReason == .uncaughtSignal)
        #expect(first.process.terminationStatus == SIGKILL)

        let acknowledged = ledger.acknowledged
        let attempted = ledger.attempted
        let unanswered = Set(attempted).subtracting(acknowledged)
        #expect(acknowledged.count >= 50, "too little load before the kill")
        #expect(ledger.otherStatuses.isEmpty, "non-200 answers under load: \(ledger.otherStatuses)")
        let clients = Self.clients
        let deliveredBeforeRestart = try await ingest.eventIDs(app: Self.app).count

        // What the killed process left in its outbox.
        let store = try await GatewayStore.open(dataDirectory: dataDirectory)
        let leftRows = try await store.appSummaries().reduce(0) { $0 + $1.batches }
        try await store.close()

        // Restart on the same data directory.
        let restarted = ContinuousClock.now
        let second = try await GatewayProcess.start(
            executable: executable, dataDirectory: dataDirectory, upstream: ingest.address, config: config)
        defer { if second.process.isRunning { kill(second.process.processIdentifier, SIGKILL) } }
        let secondPort = second.port

        // Replays of 200'd batches are duplicates; the unanswered ones are now answered 200
        // (a duplicate when their commit made it to disk before the kill).
        let replayed = Array(acknowledged.shuffled().prefix(40))
        let replays = try await withThrowingTaskGroup(of: (String, Int, String?).self) { group in
            for batchID in replayed + unanswered.sorted() {
                let worker = Int(batchID.dropFirst().prefix { $0 != "-" }) ?? 0
                group.addTask {
                    let response = try await GatewayHTTP.request(
                        port: secondPort, body: Self.body(worker: worker, batchID: batchID),
                        headers: Self.headers(batchID))
                    return (batchID, response.status, response.header("Apsio-Duplicate"))
                }
            }
            return try await group.reduce(into: [String: (Int, String?)]()) { $0[$1.0] = ($1.1, $1.2) }
        }
        for batchID in replayed {
            #expect(replays[batchID]?.0 == 200, "replay of \(batchID)")
            #expect(replays[batchID]?.1 == "true", "replay of 200'd \(batchID) must be a duplicate")
        }
        for batchID in unanswered {
            #expect(replays[batchID]?.0 == 200, "retry of unanswered \(batchID)")
        }
        let unansweredCommitted = unanswered.filter { replays[$0]?.1 == "true" }.count

        // Now every attempted batch has been answered 200 once: exactly their events must arrive.
        let expected = Self.eventIDs(of: attempted)
        let arrived = await eventually(within: .seconds(90)) {
            (try? await ingest.eventIDs(app: Self.app).count) ?? 0 >= expected.count
        }
        let drainSeconds = Self.seconds(ContinuousClock.now - restarted)
        #expect(arrived)
        let stored = try await ingest.eventIDs(app: Self.app)
        #expect(stored.count == Set(stored).count, "an event was stored twice")
        #expect(Set(stored) == expected)
        let missing = Self.eventIDs(of: acknowledged).subtracting(stored)
        #expect(missing.isEmpty, "\(missing.count) events of 200'd batches never arrived")
        #expect(try await ingest.current.counts(app: Self.app).events == expected.count)
        #expect(await eventually { (try? await GatewayHTTP.metric(port: secondPort, "pulsegate_outbox_batches")) == 0 })
        #expect(try await GatewayHTTP.metric(port: secondPort, "pulsegate_dead_letters") == 0)

        let statistics = try ingest.current.statistics().apps[Self.app] ?? IngestAppStatistics()
        print(
            """
            gateway kill -9: \(clients) clients, \(String(format: "%.1f", loadSeconds)) s of load, \
            \(attempted.count) batches sent, \(acknowledged.count) answered 200 before the kill, \
            \(unanswered.count) unanswered (\(unansweredCommitted) of them committed before the kill); \
            \(deliveredBeforeRestart) events at the ingest when killed, \(leftRows) outbox rows left; \
            after restart \(statistics.duplicateBatches) Pulse batches resent that the ingest already had \
            (\(statistics.duplicateEvents) duplicate events absorbed), all \(expected.count) events stored once \
            \(String(format: "%.2f", drainSeconds)) s after the restart
            """)

        await second.terminate()
        #expect(second.process.terminationStatus == 0)
        await ingest.stop()
    }

    @Test func sigtermUnderLoadAnswersInFlightRequestsKeepsTheOutboxAndResendsNothing() async throws {
        let (executable, root, ingest, config, dataDirectory, first, ledger, load, _) =
            try await Self.startUnderLoad("sigterm")
        defer { root.remove() }
        defer { if first.process.isRunning { kill(first.process.processIdentifier, SIGKILL) } }
        await first.terminate()
        ledger.stopping.store(true, ordering: .relaxed)
        await load.value
        #expect(first.process.terminationReason == .exit)
        #expect(first.process.terminationStatus == 0)
        // While draining, new requests get 503 with Retry-After; nothing else but 200.
        #expect(ledger.otherStatuses.allSatisfy { $0 == -503 }, "\(Set(ledger.otherStatuses))")
        #expect(first.logs.all.contains { $0.contains(#""msg":"stopped""#) && $0.contains(#""outbox":"kept""#) })

        let second = try await GatewayProcess.start(
            executable: executable, dataDirectory: dataDirectory, upstream: ingest.address, config: config)
        defer { if second.process.isRunning { kill(second.process.processIdentifier, SIGKILL) } }
        let unanswered = Set(ledger.attempted).subtracting(ledger.acknowledged)
        var unansweredCommitted = 0
        for batchID in unanswered {
            let worker = Int(batchID.dropFirst().prefix { $0 != "-" }) ?? 0
            let replay = try await GatewayHTTP.request(
                port: second.port, body: Self.body(worker: worker, batchID: batchID), headers: Self.headers(batchID))
            #expect(replay.status == 200)
            if replay.header("Apsio-Duplicate") == "true" { unansweredCommitted += 1 }
        }
        // Requests in flight at SIGTERM were answered: none that went unanswered had been stored.
        #expect(unansweredCommitted == 0)
        let acknowledged = Self.eventIDs(of: ledger.acknowledged)
        #expect(
            await eventually(within: .seconds(90)) {
                let stored = Set((try? await ingest.eventIDs(app: Self.app)) ?? [])
                return stored.isSuperset(of: acknowledged)
            })
        let secondPort = second.port
        #expect(
            await eventually { (try? await GatewayHTTP.metric(port: secondPort, "pulsegate_outbox_batches")) == 0 })
        let stored = try await ingest.eventIDs(app: Self.app)
        #expect(stored.count == Set(stored).count)
        #expect(Set(stored).isSubset(of: Self.eventIDs(of: ledger.attempted)))
        // A graceful stop lets requests in flight upstream finish and deletes their rows: nothing
        // is sent twice.
        let statistics = try ingest.current.statistics().apps[Self.app] ?? IngestAppStatistics()
        #expect(statistics.duplicateBatches == 0)
        print(
            """
            gateway SIGTERM: \(ledger.acknowledged.count) batches answered 200, \
            \(ledger.otherStatuses.count) answered 503 while draining, \
            \(unanswered.count - ledger.otherStatuses.count) unanswered (\(unansweredCommitted) committed); \
            \(stored.count) events stored once, \(statistics.duplicateBatches) batches resent
            """)
        await second.terminate()
        await ingest.stop()
    }
}
