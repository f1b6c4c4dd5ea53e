/// The single error type of the `PulseIngest` module.
///
/// Descriptions name codes, paths and identifiers of configuration entries, never payload bytes
/// or secrets.
public struct IngestError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The configuration (flags, environment or the config file) is invalid.
        case invalidConfiguration
        /// The config file could not be read.
        case configurationUnreadable
        /// The durable store could not be opened, migrated or written.
        case storageFailed
        /// The msgtrans listener or the admin HTTP endpoint could not be started.
        case startFailed
        /// The server is shutting down or has shut down.
        case shutDown
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The lower-level cause, if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        var text = "IngestError.\(code.rawValue): \(message)"
        if let underlying {
            text += " (\(underlying))"
        }
        return text
    }
}
