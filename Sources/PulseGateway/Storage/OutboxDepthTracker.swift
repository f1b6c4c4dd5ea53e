import Synchronization

/// A store's in-memory outbox depth (rows and payload bytes, in total and per app) for the
/// intake's cap checks, `/readyz` and `/metrics`: kept by the deltas of the store's own commits,
/// and recounted from the database at open and on the forwarder's rescans (which also see rows
/// another process or node changed).
///
/// A recount is a read that races the commits around it: one that read the outbox before an intake
/// commit and was stored after that commit's delta dropped the new row (the forwarder's tests saw an
/// empty outbox that held a row), and one that read before a delete and was stored after it brought
/// the row back. The two stores avoid it in two ways:
///
/// - SQLite (one process owns the database, so its deltas are exact): every depth-changing commit
///   runs between ``begin()`` and ``end(_:)``, and a recount (``recount(_:)``) is stored only when no
///   change was in flight when it began or when it ended and none ended in between; otherwise the
///   deltas stand until a later recount.
/// - PostgreSQL (other nodes change the outbox too, so a recount must land under steady traffic):
///   each change reports the transaction that committed it (``committed(transaction:_:)``) and the
///   count reports its snapshot (``recountFromSnapshot(_:)``). The count is always stored; the changes
///   that ended while it ran and that its snapshot does not see are added on top, and a change ending
///   later that the stored snapshot already saw is not added again.
final class OutboxDepthTracker: Sendable {
    /// One change of a commit: rows and bytes added (negative: removed) for an app.
    struct Change: Sendable, Equatable {
        var app: String
        var rows: Int
        var bytes: Int
    }

    private struct State {
        var depth = GatewayStore.Depth()
        var changesInFlight = 0
        var changesEnded: UInt64 = 0
        /// The snapshot of the last count stored by ``recountFromSnapshot(_:)``.
        var countedSnapshot: PostgresSnapshot?
        /// Whether a ``recountFromSnapshot(_:)`` is running, and the changes that ended meanwhile.
        var counting = false
        var endedWhileCounting: [(transaction: Int64?, changes: [Change])] = []
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

    /// A PostgreSQL commit that changed the outbox by `changes` ended; `transaction` is its
    /// transaction id (`pg_current_xact_id()`), `nil` when unknown (the change is then taken as
    /// unseen by every count).
    func committed(transaction: Int64?, _ changes: [Change]) {
        guard !changes.isEmpty else { return }
        state.withLock { state in
            // A count stored already holds it when its snapshot saw the commit, and a count still
            // running sees at least as much.
            if let transaction, state.countedSnapshot?.sees(transaction) == true { return }
            for change in changes { state.depth.add(app: change.app, rows: change.rows, bytes: change.bytes) }
            if state.counting { state.endedWhileCounting.append((transaction, changes)) }
        }
    }

    /// Counts the outbox with `count`, which returns the depth and the snapshot it was counted in,
    /// and stores it with the ``committed(transaction:_:)`` changes that ended meanwhile and that the
    /// snapshot did not see. Returns `false` (storing nothing) only when another such recount is
    /// running.
    @discardableResult
    func recountFromSnapshot(_ count: () async throws -> (GatewayStore.Depth, PostgresSnapshot)) async rethrows -> Bool
    {
        let started = state.withLock { state -> Bool in
            guard !state.counting else { return false }
            state.counting = true
            state.endedWhileCounting = []
            return true
        }
        guard started else { return false }
        let counted: (GatewayStore.Depth, PostgresSnapshot)
        do {
            counted = try await count()
        } catch {
            state.withLock { state in
                state.counting = false
                state.endedWhileCounting = []
            }
            throw error
        }
        state.withLock { state in
            var depth = counted.0
            for ended in state.endedWhileCounting where !(ended.transaction.map(counted.1.sees) ?? false) {
                for change in ended.changes { depth.add(app: change.app, rows: change.rows, bytes: change.bytes) }
            }
            state.depth = depth
            state.countedSnapshot = counted.1
            state.counting = false
            state.endedWhileCounting = []
        }
        return true
    }
}
