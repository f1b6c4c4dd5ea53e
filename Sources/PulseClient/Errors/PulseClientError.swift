package import PulseKit

/// The single error type of the PulseClient module: the shared ``PulseError`` shape with
/// ``PulseClientErrorCode`` and a ``PulseClientErrorDetail`` (response code, retry delay).
///
/// Transport failures (``PulseClientErrorCode/timeout``, ``PulseClientErrorCode/disconnected``) carry no Pulse response code: no valid
/// response arrived, so durable work stays queued and is retried by its owner. A server that *answered*
/// with a non-zero code is not an error of ``PulseClientSession/send(bizType:payload:timeout:)``; it
/// is returned as a ``PulseResponse``. Only the CONNECT handshake turns a non-zero code into an error
/// (``PulseClientErrorCode/connectRejected`` with a response code). Descriptions never include payload bytes.
package typealias PulseClientError = PulseError<PulseClientErrorCode>

/// What went wrong in the PulseClient module.
package enum PulseClientErrorCode: String, PulseErrorCode, CaseIterable {
    /// The facts an error records beside its code and message.
    package typealias Detail = PulseClientErrorDetail

    /// The TCP connection could not be established.
    case connectFailed
    /// The server answered CLIENT_CONNECT with a non-zero code (see ``PulseClientError/responseCode``)
    /// or without `connected: true`.
    case connectRejected
    /// There is no connection and the reconnect backoff or the per-window attempt cap forbids an
    /// attempt before the request's deadline (see ``PulseClientError/retryAfter``).
    case backingOff
    /// No response arrived before the request's deadline.
    case timeout
    /// The connection closed before the response arrived; the request may or may not have been processed.
    case disconnected
    /// The session was closed with ``PulseClientSession/close()``.
    case sessionClosed
    /// The calling task was cancelled.
    case cancelled
    /// The response payload is not a Pulse response envelope, or its data has the wrong shape.
    case malformedResponse
    /// The peer broke the msgtrans framing rules; the connection was closed.
    case protocolViolation
    /// The request could not be framed or compressed, or a bounded resource refused it.
    case requestFailed
    /// An inbound control RPC handler failed; used by handlers to choose their response code.
    case controlFailed
}

/// What a ``PulseClientError`` records beside its code and message.
package struct PulseClientErrorDetail: PulseErrorDetail, Hashable {
    /// The Pulse response code for ``PulseClientErrorCode/connectRejected``, or the code a control
    /// handler wants answered for ``PulseClientErrorCode/controlFailed``.
    package var responseCode: Int?
    /// For ``PulseClientErrorCode/backingOff``: how long until the next connection attempt is allowed.
    package var retryAfter: Duration?

    /// A detail with neither a response code nor a retry delay.
    package init() { self.init(responseCode: nil, retryAfter: nil) }

    /// A detail with a response code and/or a retry delay.
    package init(responseCode: Int? = nil, retryAfter: Duration? = nil) {
        self.responseCode = responseCode
        self.retryAfter = retryAfter
    }

    /// ` (code N)` and ` (retry after D)` for the facts that are present.
    package var descriptionSuffix: String {
        var text = ""
        if let responseCode { text += " (code \(responseCode))" }
        if let retryAfter { text += " (retry after \(retryAfter))" }
        return text
    }
}

extension PulseClientError {
    /// See ``PulseClientErrorDetail/responseCode``.
    package var responseCode: Int? { detail.responseCode }
    /// See ``PulseClientErrorDetail/retryAfter``.
    package var retryAfter: Duration? { detail.retryAfter }
}
