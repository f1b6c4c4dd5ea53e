/// The single error type of the PulseClient module.
///
/// Transport failures (``Code/timeout``, ``Code/disconnected``) carry no Pulse response code: no valid
/// response arrived, so durable work stays queued and is retried by its owner. A server that *answered*
/// with a non-zero code is not an error of ``PulseClientSession/send(bizType:payload:timeout:)``; it
/// is returned as a ``PulseResponse``. Only the CONNECT handshake turns a non-zero code into an error
/// (``Code/connectRejected`` with ``responseCode``). Descriptions never include payload bytes.
public struct PulseClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Hashable, CaseIterable {
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

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation (never contains payload bytes).
    public var message: String
    /// The underlying cause, if any.
    public var underlying: (any Error)?
    /// The Pulse response code for ``Code/connectRejected``, or the code a control handler wants
    /// answered for ``Code/controlFailed``.
    public var responseCode: Int?
    /// For ``Code/backingOff``: how long until the next connection attempt is allowed.
    public var retryAfter: Duration?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, underlying: (any Error)? = nil, responseCode: Int? = nil,
        retryAfter: Duration? = nil
    ) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.responseCode = responseCode
        self.retryAfter = retryAfter
    }

    public var description: String {
        var text = "PulseClientError.\(code): \(message)"
        if let responseCode {
            text += " (code \(responseCode))"
        }
        if let retryAfter {
            text += " (retry after \(retryAfter))"
        }
        if let underlying {
            text += " (underlying: \(underlying))"
        }
        return text
    }
}
