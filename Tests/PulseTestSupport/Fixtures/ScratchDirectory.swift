import Foundation

/// A fresh directory under the system temporary directory, named after what the test uses it for;
/// removed by ``remove()``.
public struct ScratchDirectory: Sendable {
    public let path: String

    /// Creates `<tmp>/pulsegate-<label>-<uuid>`.
    public init(_ label: String) throws {
        path = NSTemporaryDirectory() + "pulsegate-\(label)-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A ``ScratchDirectory`` removed when the last reference to it goes away, for fixtures that own
/// their data directory.
public final class OwnedScratchDirectory: Sendable {
    public let path: String

    public init(_ label: String) throws {
        path = try ScratchDirectory(label).path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
