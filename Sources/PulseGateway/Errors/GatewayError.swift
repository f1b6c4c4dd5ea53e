package import PulseJSON
package import PulseKit

/// The error type of the PulseGateway module: the shared ``PulseError`` shape with
/// ``GatewayErrorCode``.
///
/// Descriptions never contain payload bytes or secrets: only what kind of problem it is, where it
/// was found (a field name, a record position) and the lower-level cause.
package typealias GatewayError = PulseError<GatewayErrorCode>

/// What went wrong in the PulseGateway module, as a stable code.
package enum GatewayErrorCode: String, PulseErrorCode, CaseIterable {
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

extension GatewayError {
    /// An `invalidConfiguration` error listing every problem with its key path.
    package static func invalidConfiguration(
        _ problems: [ConfigurationProblem], file: String = #fileID, line: UInt = #line
    ) -> GatewayError {
        return GatewayError(
            .invalidConfiguration,
            "invalid configuration (\(ConfigurationProblem.count(problems))): "
                + ConfigurationProblem.summary(problems),
            file: file, line: line
        )
    }
}
