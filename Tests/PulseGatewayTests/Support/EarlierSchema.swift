import PulseStorage

@testable import PulseGateway

/// A gateway database in `directory` as the first `count` migrations left it, for tests that
/// check what a later migration does to rows an earlier release wrote.
func gatewayDatabase(atMigration count: Int, in directory: String) throws -> SQLiteConnection {
    let connection = try SQLiteConnection(path: directory + "/" + GatewayStore.fileName)
    var earlier = Migrator()
    for migration in GatewaySchema.migrator.migrations.prefix(count) {
        earlier.append(migration.identifier, sql: migration.sql)
    }
    try earlier.migrate(connection)
    return connection
}
