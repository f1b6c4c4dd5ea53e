import PulseJSON

/// The error type of the PulseGateway module.
///
/// Descriptions never contain payload bytes or secrets: only what kind of problem it is, where it
/// was found (a field name, a record position) and the lower-level cause.
public struct GatewayError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable code.
    public enum Code: String, Sendable, Equatable, Hashable {
        /// The configuration (flags, environment, config file) is not valid.
        case invalidConfiguration
        /// A request carried data the gateway cannot accept (answered with 400).
        case invalidRequest
        /// The request's app is not allowed (answered with 403).
        case forbidden
        /// Storage failed (answered with 503 on the request path).
        case storage
        /// The upstream could not be reached or answered with an error.
        case upstream
        /// A component could not start.
        case startFailed
        /// The gateway is shutting down.
        case shuttingDown
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

    public var description: String {
        if let underlying { return "\(message): \(underlying)" }
        return message
    }
}

extension GatewayError {
    /// An `invalidConfiguration` error listing every problem with its key path.
    public static func invalidConfiguration(_ problems: [ConfigurationProblem]) -> GatewayError {
        return GatewayError(
            .invalidConfiguration,
            "invalid configuration (\(ConfigurationProblem.count(problems))): " + ConfigurationProblem.summary(problems)
        )
    }
}
