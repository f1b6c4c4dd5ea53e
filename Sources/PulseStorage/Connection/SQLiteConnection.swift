import CSQLite
import PulseKit

/// One open SQLite database file, configured for durable, concurrent-reader-friendly use.
///
/// Opening a connection sets, and reads back to verify:
/// - `journal_mode = WAL` (readers never block the writer),
/// - `synchronous = FULL` (a `COMMIT` has been fsync'd to the WAL before it returns),
/// - `foreign_keys = ON`,
/// - a busy timeout (``Options/busyTimeoutMilliseconds``).
///
/// The file is opened with `SQLITE_OPEN_NOMUTEX`: SQLite does no locking of its own for this connection, so it
/// must have exactly one owner at a time. `SQLiteConnection` is therefore deliberately not `Sendable`; share a
/// database between tasks through ``SQLiteExecutor``, which owns its connection on a dedicated thread.
///
/// Statements are compiled once per distinct SQL text and cached; each reuse resets the statement and clears
/// its bindings. Use `?` placeholders for every variable value:
///
/// ```swift
/// let connection = try SQLiteConnection(path: "/var/lib/pulsegate/queue.sqlite")
/// try connection.transaction {
///     try connection.execute("INSERT INTO batch(id, body) VALUES (?, ?)", [batchID, bytes])
/// }
/// let count = try connection.queryFirst("SELECT count(*) FROM batch") { row in try row.column(0, as: Int64.self) }
/// ```
package final class SQLiteConnection {
    /// Connection settings.
    package struct Options: Sendable, Equatable {
        /// How long a statement waits for a lock held by another connection before failing with
        /// ``StorageError/Code/busy``.
        package var busyTimeoutMilliseconds: Int
        /// The maximum number of compiled statements kept for reuse; the least recently used is evicted.
        package var statementCacheCapacity: Int
        /// `nil` (the default): SQLite checkpoints the WAL itself, inside the `COMMIT` that makes it
        /// reach 1,000 pages, so that commit returns only after the checkpoint's writes and fsync.
        /// A number of pages: SQLite's automatic checkpoint is off and the connection's owner calls
        /// ``checkpointIfDue()`` when it suits it — ``SQLiteExecutor`` does after the callers of a
        /// commit have been resumed, so the checkpoint's I/O overlaps the callers' next work instead
        /// of delaying their answers. Durability is the same: a commit is fsync'd in the WAL either way.
        package var deferredCheckpointPages: Int?
        /// Opens the file read-only (`SQLITE_OPEN_READONLY`): the database must exist and already be in
        /// WAL mode (a writer connection set it), and every write fails with ``StorageError/Code/readOnly``.
        /// A WAL reader never blocks the writer and never waits for its commits: it reads the last
        /// committed snapshot. `synchronous` and checkpoints are the writer's business and not set.
        package var readOnly: Bool

        /// Creates options; the defaults suit a server process.
        package init(
            busyTimeoutMilliseconds: Int = 5_000, statementCacheCapacity: Int = 64, deferredCheckpointPages: Int? = nil,
            readOnly: Bool = false
        ) {
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.statementCacheCapacity = max(1, statementCacheCapacity)
            self.deferredCheckpointPages = deferredCheckpointPages.map { max(1, $0) }
            self.readOnly = readOnly
        }
    }

    /// The path the connection was opened with.
    package let path: String

    private var database: OpaquePointer?
    private let options: Options
    private var cache: [String: PreparedStatement] = [:]
    /// The text arena block lent to the next statement run (``SQLiteBindings``), so a run that
    /// binds text allocates nothing; `nil` while a run holds it (a nested run allocates its own).
    private var spareArena: UnsafeMutableRawBufferPointer?
    private var useClock: UInt64 = 0
    private var savepointDepth = 0
    /// Pages in the WAL after the last commit, reported by SQLite's WAL hook (deferred checkpoints only).
    private let walPages = WALPageCount()

    /// While set, a statement that would write fails with ``StorageError/Code/readOnly`` before it runs
    /// (checked with `sqlite3_stmt_readonly` on the cached statement). Unlike `PRAGMA query_only`, setting
    /// it changes nothing in SQLite, so it never expires the prepared statements.
    var rejectsWrites = false

    /// Number of times SQL text was compiled (`sqlite3_prepare`); lets tests observe statement-cache hits.
    private(set) var compileCount = 0

    /// Opens (creating if needed) the database at `path` and configures it (WAL, `synchronous=FULL`,
    /// foreign keys, busy timeout).
    ///
    /// - Throws: ``StorageError`` if the file cannot be opened, is not a database, or WAL mode is unavailable.
    package init(path: String, options: Options = Options()) throws {
        self.path = path
        self.options = options
        var handle: OpaquePointer?
        let flags =
            options.readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let resultCode = sqlite3_open_v2(path, &handle, flags, nil)
        guard resultCode == SQLITE_OK, let handle else {
            let error = StorageError(resultCode: resultCode, database: handle, context: "open `\(path)`")
            sqlite3_close_v2(handle)
            throw error
        }
        database = handle
        do {
            try configure()
        } catch {
            closeIgnoringErrors()
            throw error
        }
    }

    deinit {
        closeIgnoringErrors()
        spareArena?.deallocate()
    }

    private func configure() throws {
        guard let database else { throw StorageError.closedConnection }
        sqlite3_extended_result_codes(database, 1)
        sqlite3_busy_timeout(database, Int32(clamping: options.busyTimeoutMilliseconds))
        if options.readOnly {
            let journalMode = try pragma("PRAGMA journal_mode") { row in try row.column(0, as: String.self) }
            guard journalMode?.lowercased() == "wal" else {
                throw StorageError(
                    .cannotOpen, "`\(path)` is not in WAL mode (got \(journalMode ?? "nil"))")
            }
            return
        }

        let journalMode = try pragma("PRAGMA journal_mode = WAL") { row in try row.column(0, as: String.self) }
        guard journalMode?.lowercased() == "wal" else {
            throw StorageError(
                .cannotOpen,
                "journal_mode=WAL is not available for `\(path)` (got \(journalMode ?? "nil"))")
        }
        try execute("PRAGMA synchronous = FULL", [], cached: false)
        let synchronous = try pragma("PRAGMA synchronous") { row in try row.column(0, as: Int64.self) }
        guard synchronous == 2 else {
            throw StorageError(.cannotOpen, "synchronous=FULL was not applied to `\(path)`")
        }
        try execute("PRAGMA foreign_keys = ON", [], cached: false)
        let foreignKeys = try pragma("PRAGMA foreign_keys") { row in try row.column(0, as: Int64.self) }
        guard foreignKeys == 1 else {
            throw StorageError(.cannotOpen, "foreign_keys=ON was not applied to `\(path)`")
        }
        if options.deferredCheckpointPages != nil {
            // Replaces (and so turns off) SQLite's automatic checkpoint hook.
            sqlite3_wal_hook(
                database,
                { context, _, _, pages in
                    if let context {
                        Unmanaged<WALPageCount>.fromOpaque(context).takeUnretainedValue().pages = Int(pages)
                    }
                    return SQLITE_OK
                }, Unmanaged.passUnretained(walPages).toOpaque())
        }
    }

    /// With ``Options/deferredCheckpointPages``: runs a passive checkpoint (it never waits for
    /// locks and never blocks readers) when the WAL has reached that many pages; returns whether
    /// it ran. Otherwise does nothing. A failed checkpoint is harmless: the next call tries again.
    @discardableResult
    package func checkpointIfDue() -> Bool {
        guard let limit = options.deferredCheckpointPages, let database, walPages.pages >= limit,
            sqlite3_get_autocommit(database) != 0
        else { return false }
        walPages.pages = 0
        var logFrames: Int32 = 0
        var checkpointed: Int32 = 0
        _ = sqlite3_wal_checkpoint_v2(database, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &checkpointed)
        return true
    }

    private func pragma<T>(_ sql: String, _ map: (borrowing SQLiteRow) throws -> T) throws -> T? {
        var result: T?
        try run(sql, [], cached: false) { row in
            result = try map(row)
            return false
        }
        return result
    }

    // MARK: - Statements

    /// Runs one statement to completion, ignoring any rows it returns.
    ///
    /// - Parameters:
    ///   - sql: a single SQL statement with `?` placeholders.
    ///   - bindings: one value per placeholder, in order; `nil` binds `NULL`.
    /// - Throws: ``StorageError``; ``StorageError/Code/misuse`` if `sql` holds several statements or the
    ///   number of bindings does not match.
    package func execute(_ sql: String, _ bindings: [(any SQLiteBindable)?] = []) throws {
        try execute(sql, bindings, cached: true)
    }

    /// Runs one statement to completion with its parameters bound by `binding`, in order, without
    /// boxing each value (see ``SQLiteBindings``); for hot insert loops.
    ///
    /// - Throws: ``StorageError``; ``StorageError/Code/misuse`` if `binding` binds fewer or more
    ///   values than `sql` has parameters (the statement then does not run).
    package func execute(_ sql: String, binding: (inout SQLiteBindings) throws -> Void) throws {
        try run(sql, cached: true, binding: binding) { _ in true }
    }

    /// Runs a query and maps every result row.
    ///
    /// - Parameters:
    ///   - sql: a single SQL statement with `?` placeholders.
    ///   - bindings: one value per placeholder, in order; `nil` binds `NULL`.
    ///   - map: called once per row, in order; the row is only valid during the call.
    /// - Returns: the mapped rows.
    package func query<T>(
        _ sql: String, _ bindings: [(any SQLiteBindable)?] = [], _ map: (borrowing SQLiteRow) throws -> T
    ) throws -> [T] {
        var rows: [T] = []
        try run(sql, bindings, cached: true) { row in
            rows.append(try map(row))
            return true
        }
        return rows
    }

    /// Runs a query and maps its first row, if any; the remaining rows are not computed.
    package func queryFirst<T>(
        _ sql: String, _ bindings: [(any SQLiteBindable)?] = [], _ map: (borrowing SQLiteRow) throws -> T
    ) throws -> T? {
        try queryFirst(sql, binding: { try $0.bind(contentsOf: bindings) }, map)
    }

    /// ``queryFirst(_:_:_:)`` with the parameters bound by `binding`, in order, without boxing each
    /// value (see ``execute(_:binding:)``).
    package func queryFirst<T>(
        _ sql: String, binding: (inout SQLiteBindings) throws -> Void, _ map: (borrowing SQLiteRow) throws -> T
    ) throws -> T? {
        var first: T?
        try run(sql, cached: true, binding: binding) { row in
            first = try map(row)
            return false
        }
        return first
    }

    /// Runs several `;`-separated statements without bindings, such as a schema migration.
    ///
    /// Statements are not cached. Never build the text from untrusted values.
    package func executeScript(_ sql: String) throws {
        let database = try openDatabase()
        if rejectsWrites {
            throw StorageError(.readOnly, "a read-only job cannot run a script")
        }
        var errorMessage: UnsafeMutablePointer<CChar>?
        let resultCode = sqlite3_exec(database, sql, nil, nil, &errorMessage)
        defer { sqlite3_free(errorMessage) }
        guard resultCode == SQLITE_OK else {
            let detail = errorMessage.map { String(cString: $0) } ?? "unknown error"
            throw StorageError(
                StorageError.code(forResultCode: resultCode),
                "script failed: \(detail) — in `\(StorageError.abbreviated(sql))`",
                detail: StorageErrorDetail(extendedResultCode: Int(sqlite3_extended_errcode(database))))
        }
    }

    /// The rowid of the most recent successful `INSERT` on this connection (0 if none, or once closed).
    package var lastInsertRowID: Int64 {
        guard let database else { return 0 }
        return sqlite3_last_insert_rowid(database)
    }

    /// The number of rows changed by the most recent `INSERT`, `UPDATE` or `DELETE` (0 once closed).
    package var changes: Int {
        guard let database else { return 0 }
        return Int(sqlite3_changes64(database))
    }

    /// Whether a transaction is open.
    package var isInTransaction: Bool {
        guard let database else { return false }
        return sqlite3_get_autocommit(database) == 0
    }

    // MARK: - Transactions

    /// Runs `body` atomically: all of its changes are committed, or none are.
    ///
    /// Outside a transaction this is `BEGIN IMMEDIATE` … `COMMIT` (the write lock is taken up front, so the
    /// commit cannot fail with a lock upgrade deadlock); with `synchronous=FULL` the commit is durable when this
    /// returns. Inside a transaction it nests as a `SAVEPOINT`, so only `body`'s own changes are undone if it
    /// throws. If `body` throws, everything it did is rolled back and the error is rethrown.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction {
            return try savepoint(body)
        }
        return try transaction(beginning: "BEGIN IMMEDIATE", body)
    }

    /// Runs `body` between `begin` and `COMMIT`; if either `body` or the `COMMIT` throws, rolls back and
    /// rethrows. The one place a top-level transaction is opened and closed (``transaction(_:)``, the
    /// executor's read-only snapshots).
    func transaction<T>(beginning begin: String, _ body: () throws -> T) throws -> T {
        try execute(begin)
        let result: T
        do {
            result = try body()
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
        return result
    }

    /// Runs `body` inside a savepoint of the current transaction; rolls back to it if `body` throws.
    ///
    /// If the savepoint itself cannot be rolled back, the whole transaction is rolled back, so partial work
    /// of a failed `body` can never be committed.
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let names = Self.savepointStatements(depth: savepointDepth)
        try execute(names.begin)
        do {
            let result = try body()
            try execute(names.release)
            return result
        } catch {
            if isInTransaction {
                do {
                    try execute(names.rollback)
                    try execute(names.release)
                } catch {
                    rollbackIgnoringErrors()
                }
            }
            throw error
        }
    }

    /// The savepoint statements of one nesting depth; the common depths are built once (group
    /// commit runs one savepoint per job).
    private static func savepointStatements(depth: Int) -> SavepointStatements {
        depth < commonSavepoints.count ? commonSavepoints[depth] : SavepointStatements(depth: depth)
    }

    private static let commonSavepoints = (0..<4).map { SavepointStatements(depth: $0) }

    private struct SavepointStatements {
        let begin: String
        let release: String
        let rollback: String

        init(depth: Int) {
            let name = "pulse_savepoint_\(depth)"
            begin = "SAVEPOINT " + name
            release = "RELEASE " + name
            rollback = "ROLLBACK TO " + name
        }
    }

    /// Rolls back the open transaction, if any. Used on failure paths where the original error matters more.
    func rollbackIgnoringErrors() {
        guard let database, sqlite3_get_autocommit(database) == 0 else { return }
        sqlite3_exec(database, "ROLLBACK", nil, nil, nil)
    }

    // MARK: - Closing

    /// Finalizes cached statements and closes the database. Further use throws ``StorageError/Code/closed``.
    ///
    /// Closing an already closed connection does nothing.
    /// - Throws: ``StorageError/Code/misuse`` when called while a query on this connection is still running.
    package func close() throws {
        guard let database else { return }
        if cache.values.contains(where: { $0.inUse }) {
            throw StorageError(.misuse, "close() called while a statement is running")
        }
        for statement in cache.values {
            statement.finalize()
        }
        cache.removeAll()
        let resultCode = sqlite3_close(database)
        guard resultCode == SQLITE_OK else {
            throw StorageError(resultCode: resultCode, database: database, context: "close")
        }
        self.database = nil
    }

    private func closeIgnoringErrors() {
        guard let database else { return }
        for statement in cache.values {
            statement.finalize()
        }
        cache.removeAll()
        sqlite3_close_v2(database)
        self.database = nil
    }

    // MARK: - Internals

    private func openDatabase() throws -> OpaquePointer {
        guard let database else { throw StorageError.closedConnection }
        return database
    }

    func execute(_ sql: String, _ bindings: [(any SQLiteBindable)?], cached: Bool) throws {
        try run(sql, bindings, cached: cached) { _ in true }
    }

    /// Steps `sql` with `bindings`, calling `onRow` per row until it returns `false` or rows run out.
    /// The statement is always reset (and its bindings cleared) before this returns.
    ///
    /// Not inlined: Swift 6.3.1's optimizer crashes (`forwardToInit`, "Cannot initialize a
    /// nonCopyable type with a guaranteed value") when it inlines this into its callers in `-O`.
    @inline(never)
    private func run(
        _ sql: String, _ bindings: [(any SQLiteBindable)?], cached: Bool,
        onRow: (borrowing SQLiteRow) throws -> Bool
    ) throws {
        try run(sql, cached: cached, binding: { try $0.bind(contentsOf: bindings) }, onRow: onRow)
    }

    /// Steps `sql` with the parameters `binding` binds (which must be all of them), as above.
    @inline(never)
    private func run(
        _ sql: String, cached: Bool, binding: (inout SQLiteBindings) throws -> Void,
        onRow: (borrowing SQLiteRow) throws -> Bool
    ) throws {
        let database = try openDatabase()
        let statement = try acquireStatement(sql, cached: cached, database: database)
        var bindings = SQLiteBindings(handle: statement.handle, database: database, sql: sql, spare: spareArena)
        spareArena = nil
        defer {
            // Reset and clear the bindings first: SQLite points into the arena until then.
            release(statement, cached: cached)
            let kept = bindings.takeArena()
            if spareArena == nil { spareArena = kept } else { kept?.deallocate() }
        }
        if rejectsWrites && sqlite3_stmt_readonly(statement.handle) == 0 {
            throw StorageError(
                .readOnly, "a read-only job cannot run `\(StorageError.abbreviated(sql))`")
        }
        try binding(&bindings)
        try bindings.checkComplete()
        try step(statement, sql: sql, database: database, onRow: onRow)
    }

    /// Steps a bound statement until `onRow` returns `false` or rows run out.
    @inline(never)
    private func step(
        _ statement: PreparedStatement, sql: String, database: OpaquePointer,
        onRow: (borrowing SQLiteRow) throws -> Bool
    ) throws {
        while true {
            let resultCode = sqlite3_step(statement.handle)
            if resultCode == SQLITE_ROW {
                let keepGoing = try onRow(SQLiteRow(statement: statement.handle, sql: sql))
                if !keepGoing { return }
            } else if resultCode == SQLITE_DONE {
                return
            } else {
                throw StorageError(resultCode: resultCode, database: database, context: "step", sql: sql)
            }
        }
    }

    /// Returns a ready statement for `sql`: the cached one, or a fresh one if it is missing, evicted or
    /// already running (a re-entrant use from inside a row closure).
    private func acquireStatement(_ sql: String, cached: Bool, database: OpaquePointer) throws -> PreparedStatement {
        useClock &+= 1
        if cached, let statement = cache[sql], !statement.inUse {
            statement.inUse = true
            statement.lastUse = useClock
            return statement
        }
        let cacheable = cached && cache[sql] == nil
        let statement = try compile(sql, persistent: cacheable, database: database)
        statement.inUse = true
        statement.lastUse = useClock
        if cacheable {
            evictIfFull()
            cache[sql] = statement
            statement.cached = true
        }
        return statement
    }

    private func release(_ statement: PreparedStatement, cached: Bool) {
        statement.reset()
        statement.inUse = false
        // The flag, not a second lookup by the SQL text (which hashes the whole text again).
        if !statement.cached {
            statement.finalize()
        }
    }

    private func evictIfFull() {
        guard cache.count >= options.statementCacheCapacity else { return }
        let idle = cache.values.filter { !$0.inUse }
        guard let oldest = idle.min(by: { $0.lastUse < $1.lastUse }) else { return }
        cache[oldest.sql] = nil
        oldest.cached = false
        oldest.finalize()
    }

    private func compile(_ sql: String, persistent: Bool, database: OpaquePointer) throws -> PreparedStatement {
        compileCount += 1
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        return try sql.withCString { text in
            var handle: OpaquePointer?
            var tail: UnsafePointer<CChar>?
            let resultCode = sqlite3_prepare_v3(database, text, -1, flags, &handle, &tail)
            guard resultCode == SQLITE_OK else {
                sqlite3_finalize(handle)
                throw StorageError(resultCode: resultCode, database: database, context: "prepare", sql: sql)
            }
            guard let handle else {
                throw StorageError(.misuse, "no SQL statement in `\(StorageError.abbreviated(sql))`")
            }
            if let tail, tail.pointee != 0 {
                // Only whitespace and comments may follow: anything else would be silently ignored.
                var extra: OpaquePointer?
                let extraCode = sqlite3_prepare_v2(database, tail, -1, &extra, nil)
                if extraCode != SQLITE_OK || extra != nil {
                    sqlite3_finalize(extra)
                    sqlite3_finalize(handle)
                    throw StorageError(
                        .misuse,
                        "several statements in `\(StorageError.abbreviated(sql))`; use executeScript(_:)")
                }
            }
            return PreparedStatement(handle: handle, sql: sql)
        }
    }

    /// Number of statements currently cached.
    var cachedStatementCount: Int { cache.count }

    /// How often SQLite had to re-prepare the cached statements because they had expired (a schema
    /// change or a pragma such as `query_only`), summed over the cache (`SQLITE_STMTSTATUS_REPREPARE`).
    var statementReprepareCount: Int {
        cache.values.reduce(0) { $0 + Int(sqlite3_stmt_status($1.handle, SQLITE_STMTSTATUS_REPREPARE, 0)) }
    }
}

/// The WAL size SQLite reports to a connection's WAL hook; only touched on the connection's thread.
private final class WALPageCount {
    var pages = 0
}

@available(*, unavailable, message: "A connection has one owner; share it through SQLiteExecutor")
extension SQLiteConnection: Sendable {}

extension StorageError {
    /// The error of an operation on a closed connection.
    static var closedConnection: StorageError { StorageError(.closed, "the connection is closed") }
}
