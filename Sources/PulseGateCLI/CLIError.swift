package import PulseKit

/// An error of the command line layer (bad usage, or a component that failed to start): the
/// shared ``PulseError`` shape with ``CLIErrorCode``.
package typealias CLIError = PulseError<CLIErrorCode>

/// What went wrong on the command line, as a stable code.
package enum CLIErrorCode: String, PulseErrorCode, CaseIterable {
    /// The arguments are not valid; the process exits with status 2.
    case usage
    /// A component failed while running; the process exits with status 1.
    case runtime
    /// `pulsegate upload flush` left batches undelivered; the process exits with status 3.
    case undelivered
}

extension CLIError {
    /// The process exit status for this error.
    package var exitStatus: Int32 {
        switch code {
        case .usage: 2
        case .runtime: 1
        case .undelivered: 3
        }
    }
}
