package import PulseKit

/// The error type of the PulseHTTP module (server lifecycle failures and body decoding failures):
/// the shared ``PulseError`` shape with ``HTTPServerErrorCode``.
///
/// Descriptions never contain payload bytes.
package typealias HTTPServerError = PulseError<HTTPServerErrorCode>

/// What went wrong in the PulseHTTP module, as a stable code.
package enum HTTPServerErrorCode: String, PulseErrorCode, CaseIterable {
    /// The configuration is not valid (bad host, port out of range, non-positive limit).
    case invalidConfiguration
    /// The daemon could not be started (address in use, out of resources).
    case startFailed
    /// `start()` was called on a server that is running or was already shut down.
    case invalidState
    /// A decoded body would exceed the caller's limit; answer 413.
    case bodyTooLarge
    /// A compressed body is corrupt or truncated; answer 400.
    case malformedBody
    /// The `Content-Encoding` is not supported; answer 415.
    case unsupportedEncoding
    /// A TLS certificate chain could not be read.
    case tlsCertificate
    /// A TLS private key could not be read.
    case tlsKey
    /// A TLS private key does not belong to its certificate.
    case tlsKeyMismatch
}

extension HTTPServerError {
    /// The status a server should answer with when this error is caused by a request, or `nil` for
    /// lifecycle errors that have nothing to do with a request.
    package var suggestedStatus: HTTPStatus? {
        switch code {
        case .bodyTooLarge: return .contentTooLarge
        case .malformedBody: return .badRequest
        case .unsupportedEncoding: return .unsupportedMediaType
        case .invalidConfiguration, .startFailed, .invalidState, .tlsCertificate, .tlsKey, .tlsKeyMismatch: return nil
        }
    }
}
