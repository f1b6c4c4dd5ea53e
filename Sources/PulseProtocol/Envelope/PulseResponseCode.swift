/// The application result codes of the Pulse response envelope (the `code` field).
///
/// Any non-zero code is an application failure that still counts as a valid response: it does not
/// close the connection. Envelopes keep the raw integer, so a code outside this list decodes too (see
/// ``PulseEnvelope/knownCode``).
public enum PulseResponseCode: Int, Sendable, Hashable, CaseIterable {
    /// 0: accepted.
    case ok = 0
    /// 400: malformed payload or invalid direction/packet usage.
    case badRequest = 400
    /// 401: registration/authentication missing or invalid.
    case unauthorized = 401
    /// 403: app, package or policy rejected.
    case forbidden = 403
    /// 404: unknown `biz_type` or control route.
    case notFound = 404
    /// 409: session or configuration revision conflict.
    case conflict = 409
    /// 429: bounded queue or in-flight capacity exhausted.
    case tooManyRequests = 429
    /// 500: internal request failure.
    case internalError = 500
    /// 501: permanently allocated operation not implemented by this peer.
    case notImplemented = 501
    /// 503: durable processing queue unavailable.
    case unavailable = 503

    /// What the sender of the request does on receiving this code (the contract's table).
    public var senderAction: PulseSenderAction {
        switch self {
        case .ok: return .complete
        case .badRequest, .notFound: return .doNotRetryUnchanged
        case .unauthorized: return .reauthenticateThenRetry
        case .forbidden: return .doNotRetryUntilPolicyChanges
        case .conflict: return .pullConfigThenRetryOnce
        case .tooManyRequests, .internalError, .unavailable: return .retryWithBackoff
        case .notImplemented: return .doNotRetryUntilPeerChanges
        }
    }

    /// Whether the same request may be sent again, possibly after the ``senderAction``'s preparation
    /// (registering, pulling configuration, waiting out a backoff). `false` for success and for codes
    /// where resending is pointless until something else changes.
    public var isRetryable: Bool {
        senderAction.isRetryable
    }

    /// The contract's one-line meaning of the code.
    public var meaning: String {
        switch self {
        case .ok: return "Accepted"
        case .badRequest: return "Malformed payload or invalid direction/packet usage"
        case .unauthorized: return "Registration/authentication missing or invalid"
        case .forbidden: return "App, package or policy rejected"
        case .notFound: return "Unknown biz_type or control route"
        case .conflict: return "Session/config revision conflict"
        case .tooManyRequests: return "Bounded queue or in-flight capacity exhausted"
        case .internalError: return "Internal request failure"
        case .notImplemented: return "Permanently allocated operation is not implemented by this peer"
        case .unavailable: return "Durable processing queue unavailable"
        }
    }
}
