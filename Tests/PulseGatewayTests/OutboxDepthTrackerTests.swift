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
}
