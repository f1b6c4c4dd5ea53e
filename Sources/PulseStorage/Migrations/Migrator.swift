/// Applies an ordered, append-only list of schema migrations exactly once per database.
///
/// Each applied migration is recorded in `schema_migrations(position, identifier, applied_at)`. On every
/// ``migrate(_:)`` the recorded history must be a prefix of the registered list — same identifiers at the same
/// positions — otherwise nothing is applied and a ``StorageError/Code/migration`` error is thrown. That catches
/// reordered, removed or renamed migrations, and databases written by a newer build that knows migrations this
/// build does not. New migrations are only ever appended.
///
/// ```swift
/// var migrator = Migrator()
/// migrator.append("001_create_batch", sql: "CREATE TABLE batch(id TEXT PRIMARY KEY, body BLOB NOT NULL)")
/// migrator.append("002_index_batch", sql: "CREATE INDEX batch_by_body ON batch(length(body))")
/// try await executor.write { connection in try migrator.migrate(connection) }
/// ```

package import PulseKit

package struct Migrator: Sendable {
    /// One schema change.
    package struct Migration: Sendable, Equatable {
        /// A stable, unique name, recorded once applied. Never rename an applied migration.
        package let identifier: String
        /// One or more `;`-separated statements, run in a transaction.
        package let sql: String
    }

    /// The registered migrations, in application order.
    package private(set) var migrations: [Migration] = []
    private let clock: PulseClock

    /// Creates an empty migrator. `clock` timestamps the `applied_at` column.
    package init(clock: PulseClock = .system) {
        self.clock = clock
    }

    /// Registers the next migration.
    ///
    /// - Precondition: `identifier` is not empty and not already registered (a programming error).
    package mutating func append(_ identifier: String, sql: String) {
        precondition(!identifier.isEmpty, "migration identifier must not be empty")
        precondition(
            !migrations.contains { $0.identifier == identifier }, "migration \(identifier) is registered twice")
        migrations.append(Migration(identifier: identifier, sql: sql))
    }

    /// Applies every registered migration not yet recorded in `connection`, in order, in one transaction.
    ///
    /// Applying is idempotent: with nothing new to apply it changes nothing. If any migration fails, none of
    /// this call's migrations are kept. When called inside an open transaction it nests as a savepoint.
    ///
    /// - Returns: the identifiers applied by this call.
    /// - Throws: ``StorageError/Code/migration`` when the recorded history is not a prefix of the registered
    ///   list; other ``StorageError``s when a migration's SQL fails.
    @discardableResult
    package func migrate(_ connection: SQLiteConnection) throws -> [String] {
        try connection.transaction {
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    position INTEGER PRIMARY KEY,
                    identifier TEXT NOT NULL UNIQUE,
                    applied_at INTEGER NOT NULL
                )
                """)
            let applied = try appliedIdentifiers(connection)
            try validate(applied)
            var newlyApplied: [String] = []
            for position in applied.count..<migrations.count {
                let migration = migrations[position]
                do {
                    try connection.executeScript(migration.sql)
                } catch let error as StorageError {
                    var failure = error
                    failure.message = "migration \(migration.identifier): \(error.message)"
                    throw failure
                }
                try connection.execute(
                    "INSERT INTO schema_migrations(position, identifier, applied_at) VALUES (?, ?, ?)",
                    [position, migration.identifier, clock.wallClockMilliseconds()])
                newlyApplied.append(migration.identifier)
            }
            return newlyApplied
        }
    }

    /// The identifiers recorded in `schema_migrations`, in application order (empty if the table is missing).
    package func appliedIdentifiers(_ connection: SQLiteConnection) throws -> [String] {
        let tableExists = try connection.queryFirst(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ) { _ in true }
        guard tableExists == true else { return [] }
        let rows = try connection.query("SELECT position, identifier FROM schema_migrations ORDER BY position") { row in
            (try row.column(0, as: Int.self), try row.column(1, as: String.self))
        }
        for (index, row) in rows.enumerated() where row.0 != index {
            throw StorageError(
                .migration, "schema_migrations has a gap: position \(row.0) recorded at index \(index)")
        }
        return rows.map(\.1)
    }

    private func validate(_ applied: [String]) throws {
        for (position, identifier) in applied.enumerated() {
            if position < migrations.count, migrations[position].identifier == identifier {
                continue
            }
            if let registered = migrations.firstIndex(where: { $0.identifier == identifier }) {
                throw StorageError(
                    .migration,
                    "migration \(identifier) was applied at position \(position) but is now registered at"
                        + " position \(registered); migrations are append-only")
            }
            throw StorageError(
                .migration,
                "migration \(identifier) (position \(position)) is recorded in the database but not"
                    + " registered; the database is newer than this build or a migration was removed")
        }
    }
}
