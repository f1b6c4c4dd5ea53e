import Synchronization

/// A store's in-memory outbox depth (rows and payload bytes, in total and per app) for the
/// intake's cap checks, `/readyz` and `/metrics`: kept by the deltas of the store's own commits,
/// and recounted from the database at open, after a requeue and on the forwarder's rescans (which
/// also see rows another process or node changed).
///
/// A recount is a read that races the commits around it: one that read the outbox before an intake
/// commit and was stored after that commit's delta dropped the new row (the forwarder's tests saw an
/// empty outbox that held a row), and one that read before a delete and was stored after it brought
/// the row back. So every depth-changing commit runs between ``begin()`` and ``end(_:)``, and a
/// recount is stored only when no change was in flight when it began or when it ended and none ended
/// in between; otherwise the deltas — exact for this store's own changes — stand until a later
/// recount.
final class OutboxDepthTracker: Sendable {
    private struct State {
        var depth = GatewayStore.Depth()
        var changesInFlight = 0
        var changesEnded: UInt64 = 0
    }

    private let state = Mutex(State())

    /// The current depth.
    var depth: GatewayStore.Depth { state.withLock { $0.depth } }

    /// One app's share of ``depth``.
    func depth(app: String) -> GatewayStore.AppDepth {
        state.withLock { $0.depth.apps[app] ?? GatewayStore.AppDepth() }
    }

    /// A commit that may change the outbox is about to run.
    func begin() {
        state.withLock { $0.changesInFlight += 1 }
    }

    /// The commit begun with ``begin()`` is over; `apply` adds what it changed (nothing when it
    /// failed).
    func end(_ apply: (inout GatewayStore.Depth) -> Void = { _ in }) {
        state.withLock { state in
            state.changesInFlight -= 1
            state.changesEnded &+= 1
            apply(&state.depth)
        }
    }

    /// Counts the outbox with `count` and stores the result when no change overlapped the count.
    /// Returns whether it was stored.
    @discardableResult
    func recount(_ count: () async throws -> GatewayStore.Depth) async rethrows -> Bool {
        let start = state.withLock { $0.changesInFlight == 0 ? $0.changesEnded : nil }
        guard let start else { return false }
        let counted = try await count()
        return state.withLock { state in
            guard state.changesInFlight == 0, state.changesEnded == start else { return false }
            state.depth = counted
            return true
        }
    }
}
