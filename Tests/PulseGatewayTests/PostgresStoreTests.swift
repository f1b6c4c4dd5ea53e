import MsgTrans
import PulseTestSupport
import Testing

@testable import PulseGateway

/// The fleet store's own decisions against a real PostgreSQL cluster, with two stores standing for
/// two nodes: fleet-wide dedup under concurrency, lease exclusivity and expiry, the outbox
/// operations, pruning on one node at a time.
@Suite(.serialized) struct PostgresStoreTests {
    static let connect = Array(#"{"appId":"shop"}"#.utf8)

    static func draft(_ id: String, key: String = "k1") -> OutboxDraft {
        OutboxDraft(
            app: "shop", identityKey: key, identity: connect, kind: .events, pulseBatchID: id,
            payload: Array(#"{"identity":{},"events":[]}"#.utf8), compression: Compression.none.rawValue,
            recordCount: 1, fallback: nil)
    }

    static func commit(
        _ store: PostgresGatewayStore, batch: String, hash: UInt8 = 1, now: Int64 = 1_000, drafts: [OutboxDraft]
    ) async throws -> GatewayStore.IntakeOutcome {
        try await store.commitIntake(
            app: "shop", batchID: batch, bodyHash: [hash], sentAt: nil, now: now, retentionMilliseconds: 10_000,
            drafts: drafts, diagnostics: nil, conflict: false)
    }

    @Test func oneBatchPostedToTwoNodesAtOnceIsAcceptedExactlyOnce() async throws {
        try await PostgresCluster.with(label: "store-dedup") { cluster in
            let first = try await PostgresGatewayStore.open(url: cluster.url())
            let second = try await PostgresGatewayStore.open(url: cluster.url())
            let outcomes = try await withThrowingTaskGroup(of: GatewayStore.IntakeOutcome.self) { group in
                for index in 0..<20 {
                    let store = index % 2 == 0 ? first : second
                    group.addTask { try await Self.commit(store, batch: "same", drafts: [Self.draft("p")]) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { if case .accepted = $0 { true } else { false } }.count == 1)
            #expect(outcomes.filter { $0 == .duplicate }.count == 19)
            // Another body under the same batch id is a conflict on either node.
            #expect(try await Self.commit(second, batch: "same", hash: 2, drafts: [Self.draft("q")]) == .conflict)
            try await first.refreshDepth()
            #expect(first.outboxDepth.rows == 1)
            try await first.close()
            try await second.close()
        }
    }

    @Test func aLeaseIsHeldByOneNodeAndTakenOverAfterItExpires() async throws {
        try await PostgresCluster.with(label: "store-lease") { cluster in
            let first = try await PostgresGatewayStore.open(url: cluster.url(), leaseDuration: .milliseconds(600))
            let second = try await PostgresGatewayStore.open(url: cluster.url(), leaseDuration: .milliseconds(600))
            _ = try await Self.commit(first, batch: "b1", drafts: [Self.draft("p1")])
            #expect(await first.acquireLease(identityKey: "k1"))
            #expect(first.holdsLease(identityKey: "k1"))
            #expect(await second.acquireLease(identityKey: "k1") == false)
            // The holder's rescans see the identity; the other node's do not.
            #expect(try await first.pendingIdentities().map(\.identityKey) == ["k1"])
            #expect(try await second.pendingIdentities().isEmpty)
            // Renewed while held: still not free after longer than one lease. Real time on purpose:
            // leases are kept by the PostgreSQL server's clock, which no test clock moves.
            for _ in 0..<4 {
                try await Task.sleep(for: .milliseconds(250))
                await first.renewLeases()
            }
            #expect(await second.acquireLease(identityKey: "k1") == false)
            // The first node dies (no more renewals): the lease expires and the second takes over.
            first.stopRenewing()
            #expect(await eventually(within: .seconds(10)) { await second.acquireLease(identityKey: "k1") })
            // The first node, back, learns at its next renewal that it lost the lease.
            await first.renewLeases()
            #expect(first.holdsLease(identityKey: "k1") == false)
            // Released leases are free at once.
            second.releaseLease(identityKey: "k1")
            #expect(await eventually { await first.acquireLease(identityKey: "k1") })
            try await first.close()
            try await second.close()
        }
    }

    @Test func rowsAreDeliveredRescheduledDeadLetteredAndRequeuedInFIFOOrder() async throws {
        try await PostgresCluster.with(label: "store-outbox") { cluster in
            let store = try await PostgresGatewayStore.open(url: cluster.url())
            _ = try await Self.commit(store, batch: "b1", drafts: [Self.draft("p1"), Self.draft("p2")])
            _ = try await Self.commit(store, batch: "b2", drafts: [Self.draft("p3")])
            let rows = try await store.nextRows(identityKey: "k1", limit: 8)
            #expect(rows.map(\.pulseBatchID) == ["p1", "p2", "p3"])
            try await store.delete(seqs: [rows[0].seq])
            try await store.reschedule(seq: rows[1].seq, nextAttemptAt: 5_000, error: "code 503")
            let rescheduled = try await store.nextRows(identityKey: "k1", limit: 8)
            #expect(rescheduled.first?.attempts == 1 && rescheduled.first?.nextAttemptAt == 5_000)
            try await store.deadLetter(seq: rows[1].seq, code: 400, message: "bad", now: 6_000)
            #expect(try await store.deadLetterCount() == 1)
            #expect(try await store.deadLetters().first?.code == 400)
            #expect(try await store.requeue(now: 7_000) == 1)
            // Requeued with its sequence number: it is the head again.
            #expect(try await store.nextRows(identityKey: "k1", limit: 8).map(\.pulseBatchID) == ["p2", "p3"])
            let summary = try await store.appSummaries()
            #expect(summary.first?.batches == 2 && summary.first?.deadLetters == 0)
            #expect(store.outboxDepth.rows == 2)
            try await store.close()
        }
    }

    /// The twins of SQLite's migration 007 and of the per-app depth: a row keeps its request id
    /// through the window's refill read, dead letters and requeue; the per-app depth follows
    /// commits, deletes, dead letters and the fallback, and a recount agrees.
    @Test func requestIDsAndPerAppDepthMatchTheSQLiteStore() async throws {
        try await PostgresCluster.with(label: "store-request-id") { cluster in
            let store = try await PostgresGatewayStore.open(url: cluster.url())
            var other = Self.draft("n1", key: "k2")
            other.app = "news"
            _ = try await store.commitIntake(
                app: "shop", batchID: "b1", bodyHash: [1], sentAt: nil, now: 1_000, retentionMilliseconds: 10_000,
                drafts: [Self.draft("p1"), Self.draft("p2"), Self.draft("p3")], diagnostics: nil, conflict: false,
                requestID: "req-1")
            _ = try await store.commitIntake(
                app: "news", batchID: "b2", bodyHash: [1], sentAt: nil, now: 1_000, retentionMilliseconds: 10_000,
                drafts: [other], diagnostics: nil, conflict: false, requestID: nil)
            #expect(store.outboxDepth(app: "shop").rows == 3 && store.outboxDepth(app: "news").rows == 1)
            let rows = try await store.nextRows(identityKey: "k1", limit: 8)
            #expect(rows.map(\.requestID) == ["req-1", "req-1", "req-1"])
            let refill = try await store.eventRows(identityKey: "k1", after: rows[0].seq, limit: 8)
            #expect(refill.map(\.pulseBatchID) == ["p2", "p3"] && refill.allSatisfy { $0.requestID == "req-1" })
            #expect(try await store.nextRows(identityKey: "k2", limit: 8).first?.requestID == nil)

            try await store.delete(seqs: [rows[0].seq])
            try await store.deadLetter(seq: rows[1].seq, code: 400, message: "bad", now: 2_000)
            #expect(try await store.deadLetters().first?.requestID == "req-1")
            try await store.replaceWithFallback(
                seq: rows[2].seq, httpBatchID: "b1", drafts: [Self.draft("f1"), Self.draft("f2")], now: 3_000,
                requestID: "req-1")
            #expect(store.outboxDepth(app: "shop").rows == 2)
            let fallback = try await store.nextRows(identityKey: "k1", limit: 8)
            #expect(fallback.map(\.pulseBatchID) == ["f1", "f2"] && fallback.allSatisfy { $0.requestID == "req-1" })
            #expect(try await store.requeue(now: 4_000) == 1)
            #expect(try await store.nextRows(identityKey: "k1", limit: 8).first?.requestID == "req-1")
            let counted = store.outboxDepth
            try await store.refreshDepth()
            #expect(store.outboxDepth == counted)
            #expect(counted.apps["shop"]?.rows == 3 && counted.apps["news"]?.rows == 1 && counted.rows == 4)
            try await store.close()
        }
    }

    /// A node's recount lands while its own commits run (it used to be skipped whenever one
    /// overlapped, so under steady traffic a node never saw rows another node changed): the depth
    /// picks up the other node's rows and stays exact for this node's commits and deletes that
    /// overlap the count.
    @Test func aRecountUnderSteadyTrafficSeesAnotherNodesRowsAndKeepsItsOwn() async throws {
        try await PostgresCluster.with(label: "store-depth") { cluster in
            let first = try await PostgresGatewayStore.open(url: cluster.url())
            let second = try await PostgresGatewayStore.open(url: cluster.url())
            for index in 0..<5 {
                _ = try await Self.commit(second, batch: "other-\(index)", drafts: [Self.draft("o\(index)", key: "k2")])
            }
            _ = try await Self.commit(first, batch: "mine", drafts: (0..<4).map { Self.draft("m\($0)") })
            #expect(first.outboxDepth.rows == 4)
            let mine = try await first.nextRows(identityKey: "k1", limit: 8).map(\.seq)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<8 {
                    group.addTask {
                        for index in 0..<25 {
                            _ = try await Self.commit(first, batch: "b\(task)-\(index)", drafts: [Self.draft("p")])
                        }
                    }
                }
                group.addTask {
                    for seq in mine { try await first.delete(seqs: [seq]) }
                }
                group.addTask {
                    for _ in 0..<20 { try await first.refreshDepth() }
                }
                try await group.waitForAll()
            }
            // No recount after the traffic: what the node holds is what the recounts during it and
            // the overlapping deltas made.
            #expect(first.outboxDepth.rows == 5 + 200)
            #expect(first.outboxDepth.bytes == 205 * Self.draft("p").payload.count)
            let held = first.outboxDepth
            try await first.refreshDepth()
            #expect(first.outboxDepth == held)
            try await first.close()
            try await second.close()
        }
    }

    /// The diagnostics ledger in PostgreSQL follows the SQLite ledger's rules: recorded with a new
    /// batch only (a duplicate changes nothing), sequence numbers merged into ranges whatever the
    /// arrival order, the latest record that of the highest sequence, visible from every node.
    @Test func theDiagnosticsLedgerRecordsNewBatchesOnlyAndMergesSequenceRanges() async throws {
        try await PostgresCluster.with(label: "store-diagnostics") { cluster in
            let first = try await PostgresGatewayStore.open(url: cluster.url())
            let second = try await PostgresGatewayStore.open(url: cluster.url())
            func observe(_ sequence: Int64, record: String? = nil) -> DiagnosticsObservation {
                DiagnosticsObservation(
                    installationID: "inst-1", deviceID: "dev-1", sequence: sequence,
                    record: record.map { Array($0.utf8) }, attempted: record == nil ? nil : sequence,
                    sentOK: record == nil ? nil : sequence - 1, sentWithErrors: record == nil ? nil : 1)
            }
            func commit(_ store: PostgresGatewayStore, _ batch: String, _ sequence: Int64, record: String? = nil)
                async throws -> GatewayStore.IntakeOutcome
            {
                try await store.commitIntake(
                    app: "shop", batchID: batch, bodyHash: [1], sentAt: nil, now: 1_000 + sequence,
                    retentionMilliseconds: 100_000, drafts: [Self.draft("p-\(batch)")],
                    diagnostics: observe(sequence, record: record), conflict: false, requestID: nil)
            }
            _ = try await commit(first, "b1", 1)
            _ = try await commit(second, "b3", 3, record: #"{"n":3}"#)
            _ = try await commit(first, "b5", 5)
            _ = try await commit(second, "b2", 2, record: #"{"n":2}"#)
            // A duplicate of b5 (another node) records nothing.
            #expect(try await commit(second, "b5", 5) == .duplicate)
            let devices = try await second.diagnosticsDevices(app: "shop", records: true)
            #expect(devices.count == 1)
            let device = try #require(devices.first?.device)
            #expect(device.installationID == "inst-1" && device.deviceID == "dev-1")
            #expect(device.batchesReceived == 4 && device.highestSequence == 5)
            #expect(device.received.map { [$0.low, $0.high] } == [[1, 3], [5, 5]])
            // The latest record is that of the highest sequence that carried one (3, not 2).
            #expect(device.latest == Array(#"{"n":3}"#.utf8) && device.attempted == 3 && device.sentOK == 2)
            let gaps = DiagnosticsLedger.gaps(device.received, now: 10_000, graceMilliseconds: 0)
            #expect(gaps.missing.map { [$0.from, $0.to] } == [[4, 4]])
            #expect(try await first.diagnosticsDevices(app: nil, records: false).first?.device.latest == nil)
            try await first.close()
            try await second.close()
        }
    }

    @Test func expiredKeysArePrunedInSlicesAndTheirBatchIDsAreNewAgain() async throws {
        try await PostgresCluster.with(label: "store-prune") { cluster in
            let store = try await PostgresGatewayStore.open(url: cluster.url())
            for index in 0..<5 {
                _ = try await Self.commit(store, batch: "old\(index)", now: 0, drafts: [])
            }
            #expect(try await store.pruneExpired(now: 20_000, limit: 2) == 2)
            #expect(try await store.pruneExpired(now: 20_000, limit: 10) == 3)
            #expect(try await store.pruneExpired(now: 20_000, limit: 10) == 0)
            let again = try await Self.commit(store, batch: "old0", now: 20_000, drafts: [Self.draft("n")])
            #expect(again == .accepted(seqs: again.seqs, conflict: false))
            #expect(again.seqs.count == 1)
            try await store.close()
        }
    }
}

extension GatewayStore.IntakeOutcome {
    fileprivate var seqs: [Int64] {
        if case .accepted(let seqs, _) = self { return seqs }
        return []
    }
}
