import Foundation

/// A fresh folder under the system temporary directory holding one database path; removed on `deinit`.
final class TemporaryDatabase: Sendable {
    let directory: String
    let path: String

    init() throws {
        directory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("pulse-storage-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = directory + "/test.sqlite"
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
