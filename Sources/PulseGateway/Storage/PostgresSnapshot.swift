/// Which transactions a PostgreSQL snapshot sees: `pg_current_snapshot()`'s text form
/// `xmin:xmax:xip,...` (64-bit transaction ids, so no wraparound).
///
/// The PostgreSQL store tags each of its depth changes with the transaction id that committed it
/// and takes its outbox recount in a snapshot, so ``OutboxDepthTracker`` can tell whether the count
/// already holds a change (see ``sees(_:)``).
struct PostgresSnapshot: Sendable, Equatable {
    /// Every transaction below this one had ended when the snapshot was taken.
    let xmin: Int64
    /// No transaction from this one on had ended.
    let xmax: Int64
    /// Transactions in `xmin..<xmax` still running when the snapshot was taken.
    let inProgress: Set<Int64>

    init(xmin: Int64, xmax: Int64, inProgress: Set<Int64> = []) {
        self.xmin = xmin
        self.xmax = xmax
        self.inProgress = inProgress
    }

    /// Parses `pg_current_snapshot()::text`; `nil` for anything else.
    init?(text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let xmin = Int64(parts[0]), let xmax = Int64(parts[1]), xmin <= xmax else {
            return nil
        }
        var inProgress = Set<Int64>()
        for part in parts[2].split(separator: ",") {
            guard let xid = Int64(part), xid >= xmin, xid < xmax else { return nil }
            inProgress.insert(xid)
        }
        self.init(xmin: xmin, xmax: xmax, inProgress: inProgress)
    }

    /// Whether a transaction that committed saw its commit in this snapshot: it had ended before
    /// the snapshot was taken.
    func sees(_ xid: Int64) -> Bool {
        xid < xmin || (xid < xmax && !inProgress.contains(xid))
    }
}
