import PulseKit
import PulseTestSupport
import Testing

@testable import PulseStorage

@Suite struct MigratorTests {
    private func makeMigrator(_ migrations: [(String, String)], now: Int64 = 1_700_000_000_000) -> Migrator {
        var migrator = Migrator(clock: ManualClock(wallClockMilliseconds: now).clock)
        for (identifier, sql) in migrations {
            migrator.append(identifier, sql: sql)
        }
        return migrator
    }

    private let first = ("001_events", "CREATE TABLE events(id TEXT PRIMARY KEY, body BLOB NOT NULL)")
    private let second = (
        "002_devices", "CREATE TABLE devices(id TEXT PRIMARY KEY); CREATE INDEX devices_id ON devices(id)"
    )

    @Test func appliesOnceAndRecords() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(path: database.path)
        let migrator = makeMigrator([first, second])
        #expect(try migrator.migrate(connection) == ["001_events", "002_devices"])
        #expect(try migrator.migrate(connection) == [])
        let recorded = try connection.query(
            "SELECT position, identifier, applied_at FROM schema_migrations ORDER BY position"
        ) { row in
            "\(try row.column(0, as: Int.self)) \(try row.column(1, as: String.self)) \(try row.column(2, as: Int64.self))"
        }
        #expect(recorded == ["0 001_events 1700000000000", "1 002_devices 1700000000000"])
        let tables = try connection.query(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ) { row in try row.column(0, as: String.self) }
        #expect(tables == ["devices", "devices_id", "events", "schema_migrations"])
    }

    @Test func reopeningAppliesOnlyAppendedMigrations() throws {
        let database = try TemporaryDatabase()
        do {
            let connection = try SQLiteConnection(path: database.path)
            #expect(try makeMigrator([first]).migrate(connection) == ["001_events"])
            try connection.close()
        }
        let connection = try SQLiteConnection(path: database.path)
        let migrator = makeMigrator([first, second], now: 42)
        #expect(try migrator.appliedIdentifiers(connection) == ["001_events"])
        #expect(try migrator.migrate(connection) == ["002_devices"])
        #expect(try migrator.migrate(connection) == [])
        let times = try connection.query("SELECT applied_at FROM schema_migrations ORDER BY position") { row in
            try row.column(0, as: Int64.self)
        }
        #expect(times == [1_700_000_000_000, 42])
    }

    @Test func detectsReorderedAndUnknownMigrations() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(path: database.path)
        try makeMigrator([first, second]).migrate(connection)

        // Reordered: an applied id now sits at another position.
        #expect {
            try makeMigrator([second, first]).migrate(connection)
        } throws: { ($0 as? StorageError)?.code == .migration }
        // Removed or renamed: an applied id is no longer registered.
        #expect {
            try makeMigrator([first]).migrate(connection)
        } throws: { ($0 as? StorageError)?.code == .migration }
        #expect {
            try makeMigrator([first, ("002_renamed", "SELECT 1"), ("003_new", "CREATE TABLE x(y)")]).migrate(connection)
        } throws: { ($0 as? StorageError)?.code == .migration }
        // Nothing was applied by the rejected runs.
        let count = try connection.queryFirst("SELECT count(*) FROM sqlite_master WHERE name = 'x'") { row in
            try row.column(0, as: Int.self)
        }
        #expect(count == 0)
    }

    @Test func failingMigrationAppliesNothing() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(path: database.path)
        let migrator = makeMigrator([first, ("002_broken", "CREATE TABLE ok(x); CREATE TABLEE broken(x)")])
        #expect {
            try migrator.migrate(connection)
        } throws: { error in
            let error = error as? StorageError
            return error?.code == .sqlite && error?.message.contains("002_broken") == true
        }
        #expect(try migrator.appliedIdentifiers(connection) == [])
        let tables = try connection.query("SELECT name FROM sqlite_master WHERE type = 'table'") { row in
            try row.column(0, as: String.self)
        }
        #expect(tables.isEmpty)
    }
}
