import PulseKit
import PulseTestSupport
import Synchronization
import Testing

@testable import PulseGateway

/// The intake's thread path (docs/gateway.md, "The intake's threads"): a request is dispatched on
/// libmicrohttpd's thread and answered from the commit thread once its group is durable.
@Suite struct IntakeThreadTests {
    private static func body(_ index: Int) -> String {
        OTLP.logs(records: [
            OTLP.record(1_700_000_000 + index, attributes: [OTLP.string("log.record.uid", "t-\(index)")])
        ])
    }

    /// The HTTP batch ids of every outbox row.
    private static func storedBatchIDs(_ store: any GatewayStoring) async throws -> Set<String> {
        var ids: Set<String> = []
        for identity in try await store.pendingIdentities() {
            for row in try await store.nextRows(identityKey: identity.identityKey, limit: 10_000) {
                ids.insert(row.httpBatchID)
            }
        }
        return ids
    }

    /// POSTs batch `index` on its own connection; `nil` when the connection was refused or reset.
    private static func post(_ index: Int, port: Int) async -> (index: Int, status: Int)? {
        try? await onThread {
            let connection = try RawHTTPConnection(port: port)
            try connection.sendRequest(
                method: "POST", target: "/v1/logs",
                headers: [
                    ("Content-Type", "application/json"), ("Apsio-App-Id", "shop"), ("Apsio-Batch-Id", "b-\(index)"),
                ],
                body: Array(body(index).utf8))
            return (index, try connection.readResponse().status)
        }
    }

    @Test func concurrentRequestsAreAllAnsweredAfterTheCommitThatHoldsThem() async throws {
        // Gathering on, so that groups hold several requests (no upstream: rows stay in the outbox).
        let harness = try await GatewayHarness.start { $0.commitGatherMicroseconds = 2_000 }
        let port = harness.gateway.httpPort
        let count = 40
        let results = await withTaskGroup(of: (index: Int, status: Int)?.self) { group in
            for index in 0..<count { group.addTask { await Self.post(index, port: port) } }
            var results: [(index: Int, status: Int)] = []
            for await result in group { if let result { results.append(result) } }
            return results
        }
        #expect(results.count == count)
        #expect(results.allSatisfy { $0.status == 200 })
        // Answered only after the commit: every acknowledged batch is in the outbox already.
        let stored = try await Self.storedBatchIDs(harness.gateway.store)
        #expect(stored == Set((0..<count).map { "b-\($0)" }))
        let statistics = harness.gateway.store.commitStatistics
        #expect(statistics.groupSizeSum >= count)
        #expect(statistics.groupCommits >= 1 && statistics.groupCommits <= count)
        let metrics = try await harness.request("GET", "/metrics", headers: []).bodyText
        #expect(metrics.contains("pulsegate_commit_jobs_per_fsync_count \(statistics.groupCommits)"))
        await harness.stop()
    }

    @Test func shutdownWhileRequestsCommitLosesNothingAcknowledged() async throws {
        let directory = try TemporaryDirectory()
        let harness = try await GatewayHarness.start(directory: directory) { $0.commitGatherMicroseconds = 5_000 }
        let port = harness.gateway.httpPort
        let answers = Answers()
        // Eight clients post batch after batch until the gateway refuses or goes away; the shutdown
        // begins while they do, so requests are being received, mapped and committed when it does.
        let clients = Task {
            await withTaskGroup(of: Void.self) { group in
                for client in 0..<8 {
                    group.addTask {
                        for round in 0..<1_000 {
                            guard let answer = await Self.post(client * 1_000 + round, port: port) else { return }
                            answers.append(answer)
                            if answer.status != 200 { return }
                        }
                    }
                }
            }
        }
        _ = await eventually { answers.acknowledged.count >= 16 }
        await harness.stop(removing: false)
        await clients.value
        // Every answer is either the durable 200 or the refusal of a draining gateway.
        #expect(answers.all.allSatisfy { $0.status == 200 || $0.status == 503 })
        let acknowledged = answers.acknowledged
        let reopened = try await GatewayHarness.start(directory: directory)
        let stored = try await Self.storedBatchIDs(reopened.gateway.store)
        #expect(acknowledged.isSubset(of: stored))
        #expect(acknowledged.count >= 16)
        await reopened.stop()
    }
}

/// The answers the clients got, from any task.
private final class Answers: Sendable {
    private let values = Mutex<[(index: Int, status: Int)]>([])

    func append(_ answer: (index: Int, status: Int)) { values.withLock { $0.append(answer) } }

    var all: [(index: Int, status: Int)] { values.withLock { $0 } }

    /// The batch ids answered 200.
    var acknowledged: Set<String> { Set(all.filter { $0.status == 200 }.map { "b-\($0.index)" }) }
}
