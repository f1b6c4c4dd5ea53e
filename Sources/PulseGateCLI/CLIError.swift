/// An error of the command line layer: bad usage, or a component that failed to start.
public struct CLIError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable code.
    public enum Code: Sendable, Equatable {
        /// The arguments are not valid; the process exits with status 2.
        case usage
        /// A component failed while running; the process exits with status 1.
        case runtime
        /// `pulsegate upload flush` left batches undelivered; the process exits with status 3.
        case undelivered
    }

    /// The stable code.
    public var code: Code
    /// A human-readable message; never contains payloads or secrets.
    public var message: String
    /// The lower-level cause, if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The process exit status for this error.
    public var exitStatus: Int32 {
        switch code {
        case .usage: 2
        case .runtime: 1
        case .undelivered: 3
        }
    }

    public var description: String {
        if let underlying { return "\(message): \(underlying)" }
        return message
    }
}
