import PulseTestSupport
import Testing

@testable import PulseGateway

/// The in-memory outbox depth against recounts that overlap commits (the race that let the
/// forwarder's tests see an empty outbox holding a row, and a delivered row come back).
@Suite struct OutboxDepthTrackerTests {
    static func counted(_ rows: Int, app: String = "shop") -> GatewayStore.Depth {
        var depth = GatewayStore.Depth()
        depth.add(app: app, rows: rows, bytes: rows * 10)
        return depth
    }

    @Test func aRecountWithNoChangeAroundItIsStored() async {
        let tracker = OutboxDepthTracker()
        #expect(await tracker.recount { Self.counted(3) })
        #expect(tracker.depth.rows == 3)
        #expect(tracker.depth(app: "shop") == GatewayStore.AppDepth(rows: 3, bytes: 30))
    }

    @Test func aCommitEndingDuringTheCountKeepsItsRow() async {
        // The count read the outbox before the intake commit; the commit's delta lands before the
        // count is stored. Storing the count would drop the new row.
        let tracker = OutboxDepthTracker()
        let stored = await tracker.recount {
            tracker.begin()
            tracker.end { $0.add(app: "shop", rows: 1, bytes: 10) }
            return Self.counted(0)
        }
        #expect(!stored)
        #expect(tracker.depth.rows == 1)
    }

    @Test func aDeleteInFlightWhenTheCountEndsIsNotUndone() async {
        // The count read the row before a delete committed; the delete's delta lands after it.
        let tracker = OutboxDepthTracker()
        tracker.begin()
        tracker.end { $0.add(app: "shop", rows: 1, bytes: 10) }
        let stored = await tracker.recount {
            tracker.begin()
            return Self.counted(1)
        }
        tracker.end { $0.add(app: "shop", rows: -1, bytes: -10) }
        #expect(!stored)
        #expect(tracker.depth.rows == 0)
        #expect(tracker.depth.apps.isEmpty)
    }

    @Test func aCountBegunWhileACommitRunsIsNotStored() async {
        let tracker = OutboxDepthTracker()
        tracker.begin()
        #expect(!(await tracker.recount { Self.counted(5) }))
        tracker.end()
        #expect(tracker.depth.rows == 0)
        // Once nothing is in flight the next recount is taken (rows another process changed).
        #expect(await tracker.recount { Self.counted(5) })
        #expect(tracker.depth.rows == 5)
    }

    @Test func aFailedCommitChangesNothing() {
        let tracker = OutboxDepthTracker()
        tracker.begin()
        tracker.end()
        #expect(tracker.depth == GatewayStore.Depth())
    }

    // MARK: - PostgreSQL: changes tagged with their transaction, counts with their snapshot

    static let snapshot = PostgresSnapshot(xmin: 100, xmax: 110, inProgress: [104])

    static func added(_ rows: Int, app: String = "shop") -> [OutboxDepthTracker.Change] {
        [.init(app: app, rows: rows, bytes: rows * 10)]
    }

    @Test func aSnapshotSeesTheTransactionsThatEndedBeforeIt() throws {
        let snapshot = try #require(PostgresSnapshot(text: "100:110:104,107"))
        #expect(snapshot == PostgresSnapshot(xmin: 100, xmax: 110, inProgress: [104, 107]))
        #expect(snapshot.sees(99) && snapshot.sees(100) && snapshot.sees(105) && snapshot.sees(109))
        #expect(!snapshot.sees(104) && !snapshot.sees(107) && !snapshot.sees(110) && !snapshot.sees(500))
        #expect(PostgresSnapshot(text: "7:7:") == PostgresSnapshot(xmin: 7, xmax: 7))
        for bad in ["", "1:2", "2:1:", "1:5:6", "1:5:0", "a:5:", "1:5:2,x", "1:5:2:3"] {
            #expect(PostgresSnapshot(text: bad) == nil, "\(bad)")
        }
    }

    @Test func aCountAlwaysLandsUnderSteadyCommits() async {
        // Another node's 5 rows are in the count; this node's commit ending while it runs is added
        // on top when the snapshot did not see it, and not twice when it did.
        let tracker = OutboxDepthTracker()
        tracker.committed(transaction: 90, Self.added(2))
        let stored = await tracker.recountFromSnapshot {
            tracker.committed(transaction: 104, Self.added(1))  // running when the snapshot was taken
            tracker.committed(transaction: 105, Self.added(1))  // ended before it
            tracker.committed(transaction: 111, Self.added(-1))  // began after it: a delete
            return (Self.counted(2 + 5 + 1), Self.snapshot)
        }
        #expect(stored)
        #expect(tracker.depth.rows == 2 + 5 + 1 + 1 - 1)
        #expect(tracker.depth(app: "shop") == GatewayStore.AppDepth(rows: 8, bytes: 80))
    }

    @Test func aChangeEndingAfterTheCountIsNotCountedTwice() async {
        // The commit had committed (the snapshot saw it) but its caller resumed after the count was
        // stored: the count holds it already. One the snapshot did not see is added.
        let tracker = OutboxDepthTracker()
        #expect(await tracker.recountFromSnapshot { (Self.counted(4), Self.snapshot) })
        tracker.committed(transaction: 103, Self.added(1))
        #expect(tracker.depth.rows == 4)
        tracker.committed(transaction: 104, Self.added(1))
        tracker.committed(transaction: 120, Self.added(-2))
        #expect(tracker.depth.rows == 3)
        // A change without a transaction id is taken as unseen; one with no rows changes nothing.
        tracker.committed(transaction: nil, Self.added(1))
        tracker.committed(transaction: 130, [])
        #expect(tracker.depth.rows == 4)
    }

    @Test func anOverlappingOrFailedCountStoresNothing() async {
        let tracker = OutboxDepthTracker()
        tracker.committed(transaction: 1, Self.added(3))
        let inner = await tracker.recountFromSnapshot {
            let second = await tracker.recountFromSnapshot { (Self.counted(9), Self.snapshot) }
            #expect(!second)
            return (Self.counted(3), PostgresSnapshot(xmin: 2, xmax: 2))
        }
        #expect(inner && tracker.depth.rows == 3)
        struct Unreachable: Error {}
        await #expect(throws: Unreachable.self) {
            try await tracker.recountFromSnapshot { throw Unreachable() }
        }
        #expect(tracker.depth.rows == 3)
        // The failed count left nothing behind: the next one lands.
        #expect(await tracker.recountFromSnapshot { (Self.counted(6), Self.snapshot) })
        #expect(tracker.depth.rows == 6)
    }
}
