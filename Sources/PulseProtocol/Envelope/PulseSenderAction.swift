/// What the sender of a request does with the response code it received (the contract's "default
/// sender action" column).
///
/// Transport timeouts, cancellations and disconnects have no code and no action here: durable
/// operations simply stay queued and retry.
public enum PulseSenderAction: String, Sendable, Hashable {
    /// Code 0: complete the request. A durable outbox row is removed only when the typed data also
    /// confirms acceptance (`data == true` for uploads).
    case complete
    /// Codes 400 and 404: do not send the same bytes again.
    case doNotRetryUnchanged
    /// Code 401: register (send `CLIENT_CONNECT`) or refresh credentials, then retry.
    case reauthenticateThenRetry
    /// Code 403: do not retry until the server's policy changes.
    case doNotRetryUntilPolicyChanges
    /// Code 409: reconcile the session or configuration revision (register again or send
    /// `CLIENT_CONFIG_PULL`), then retry once.
    case pullConfigThenRetryOnce
    /// Codes 429, 500 and 503: retry durable operations with jittered exponential backoff, capped per
    /// time window.
    case retryWithBackoff
    /// Code 501: do not retry until the peer's capability or version changes.
    case doNotRetryUntilPeerChanges

    /// Whether the request may be sent again after this action's preparation.
    public var isRetryable: Bool {
        switch self {
        case .reauthenticateThenRetry, .pullConfigThenRetryOnce, .retryWithBackoff: return true
        case .complete, .doNotRetryUnchanged, .doNotRetryUntilPolicyChanges, .doNotRetryUntilPeerChanges:
            return false
        }
    }

    /// The action for any numeric code, including codes this build does not know: unknown `5xx`
    /// codes back off and retry, every other unknown code is treated as "do not retry unchanged".
    public static func forCode(_ code: Int) -> PulseSenderAction {
        if let known = PulseResponseCode(rawValue: code) {
            return known.senderAction
        }
        return (500...599).contains(code) ? .retryWithBackoff : .doNotRetryUnchanged
    }
}
