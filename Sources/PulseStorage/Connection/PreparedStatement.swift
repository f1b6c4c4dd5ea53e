import CSQLite

/// A compiled statement owned by one ``SQLiteConnection``.
///
/// Cached statements live as long as the connection; uncached ones are finalized right after use.
final class PreparedStatement {
    let handle: OpaquePointer
    let sql: String
    /// Set while the statement is being stepped, so a re-entrant use of the same SQL gets its own statement.
    var inUse = false
    /// Monotonic use stamp for least-recently-used eviction.
    var lastUse: UInt64 = 0
    /// In its connection's statement cache (until evicted): kept after use rather than finalized.
    var cached = false
    private var finalized = false

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
    }

    /// Number of `?` parameters.
    var parameterCount: Int {
        Int(sqlite3_bind_parameter_count(handle))
    }

    /// Resets the statement and drops its bindings (also releases copies of large bound values).
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func finalize() {
        guard !finalized else { return }
        finalized = true
        sqlite3_finalize(handle)
    }

    deinit {
        finalize()
    }
}
