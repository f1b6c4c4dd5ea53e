import Foundation

/// A fresh directory under the system temporary directory, named after what the test uses it for;
/// removed by ``remove()``.
package struct ScratchDirectory: Sendable {
    package let path: String

    /// Creates `<tmp>/pulsegate-<label>-<uuid>`.
    package init(_ label: String) throws {
        path = NSTemporaryDirectory() + "pulsegate-\(label)-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    package func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A ``ScratchDirectory`` removed when the last reference to it goes away, for fixtures that own
/// their data directory.
package final class OwnedScratchDirectory: Sendable {
    package let path: String

    package init(_ label: String) throws {
        path = try ScratchDirectory(label).path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
