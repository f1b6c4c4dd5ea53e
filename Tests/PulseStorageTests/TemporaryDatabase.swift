import PulseTestSupport

@testable import PulseStorage

/// A fresh folder under the system temporary directory holding one database path; removed on `deinit`.
final class TemporaryDatabase: Sendable {
    private let scratch: OwnedScratchDirectory
    var directory: String { scratch.path }
    let path: String

    init() throws {
        scratch = try OwnedScratchDirectory("storage-tests")
        path = scratch.path + "/test.sqlite"
    }

    /// A connection to ``path`` on which `schema` has run.
    func open(creating schema: String) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path)
        try connection.execute(schema)
        return connection
    }
}
