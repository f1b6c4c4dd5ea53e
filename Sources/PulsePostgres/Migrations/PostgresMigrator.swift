/// An append-only list of named schema migrations for PostgreSQL, applied in order and
/// recorded in `pulsegate_migrations` (name, position, time applied).
///
/// ``migrate(_:)`` runs in one transaction under a transaction-scoped advisory lock
/// (`pg_advisory_xact_lock`), so several nodes starting at once apply each migration exactly
/// once: the others wait for the lock, then find the migrations recorded. Recorded migrations
/// must be a prefix of the list (same names, same order); anything else is a
/// ``PostgresError/Code/migration`` error and nothing is changed (a database written by a newer
/// version, or an edited list).

import PulseKit

package struct PostgresMigrator: Sendable {
    /// The advisory lock key migrations hold (`'PGmg'`).
    package static let lockKey: Int64 = 0x5047_6D67

    private var migrations: [(name: String, sql: String)] = []

    /// An empty list.
    package init() {}

    /// Appends a migration: `sql` may hold several statements (no parameters).
    package mutating func append(_ name: String, sql: String) {
        migrations.append((name, sql))
    }

    /// The registered names, in order.
    package var names: [String] { migrations.map(\.name) }

    /// Applies the missing migrations; returns the names applied now.
    ///
    /// - Throws: ``PostgresError`` (`migration` when the recorded list is not a prefix).
    @discardableResult
    package func migrate(_ connection: PostgresConnection) throws(PostgresError) -> [String] {
        try connection.transaction { () throws(PostgresError) -> [String] in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int(Self.lockKey)])
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS pulsegate_migrations (
                    name text PRIMARY KEY, position bigint NOT NULL UNIQUE,
                    applied_at timestamptz NOT NULL DEFAULT now())
                """)
            let recorded = try connection.execute("SELECT name FROM pulsegate_migrations ORDER BY position").rows.map {
                (row) throws(PostgresError) -> String in try row.string(0)
            }
            guard recorded.count <= migrations.count, zip(recorded, migrations).allSatisfy({ $0 == $1.name }) else {
                throw PostgresError(
                    .migration,
                    "the database's recorded migrations (\(recorded.count)) do not match this version's list")
            }
            var applied: [String] = []
            for (position, migration) in migrations.enumerated().dropFirst(recorded.count) {
                try connection.executeScript(migration.sql)
                try connection.execute(
                    "INSERT INTO pulsegate_migrations(name, position) VALUES ($1, $2)",
                    [.text(migration.name), .int(Int64(position + 1))])
                applied.append(migration.name)
            }
            return applied
        }
    }
}
