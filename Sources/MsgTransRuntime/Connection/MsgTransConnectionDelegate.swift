package import MsgTrans

/// The application side of one connection: admission, request handling and close notification.
///
/// A server asks its delegate factory for one instance per accepted connection; a client passes
/// one to ``MsgTransConnection/connect(host:port:configuration:delegate:statistics:on:)``. The
/// instance is the natural home of per-connection session state. ``admit(_:on:)`` runs on the
/// event loop thread, the handlers on Swift tasks, concurrently with each other, so that state
/// must be synchronized (for example with a `Mutex`).
///
/// ## Ordering a session handshake
///
/// Return ``MsgTransAdmission/dispatchExclusively`` for a handshake request (such as Pulse
/// CLIENT_CONNECT). Nothing else is admitted until its handler has returned; a handler that
/// records "connected" in the session before returning is therefore seen by ``admit(_:on:)``
/// for every later message, including those that arrived while the handshake ran.
package protocol MsgTransConnectionDelegate: Sendable {
    /// Decides, synchronously on the read path, what happens to an inbound request or one-way
    /// message before anything is dispatched. Runs on the event loop thread in arrival order: it
    /// must be fast and must never block or wait. The default dispatches everything.
    func admit(_ header: FrameHeader, on connection: MsgTransConnection) -> MsgTransAdmission

    /// Answers an inbound request. A thrown error is turned into the reply of
    /// ``MsgTransConfiguration/failureResponder``; either way exactly one response is sent.
    func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async throws -> MsgTransReply

    /// Consumes an inbound one-way message. The default ignores it.
    func handleOneWay(_ message: MsgTransMessage, on connection: MsgTransConnection) async

    /// Called once, on the event loop thread, when the connection has closed. Must not block.
    func connectionDidClose(_ connection: MsgTransConnection, reason: MsgTransRuntimeError)

    /// Decides, on the event loop thread, whether a response that matches none of this side's
    /// requests (unknown, duplicate or late) closes the connection. Either way it is counted in
    /// ``MsgTransStatistics/Snapshot/unmatchedResponses`` and never reaches a handler. Must be fast
    /// and must not block. The default keeps the connection open; a Pulse server closes when such a
    /// response is the connection's first frame (the first-frame rule).
    func closesOnUnmatchedResponse(_ header: FrameHeader, on connection: MsgTransConnection) -> Bool
}

extension MsgTransConnectionDelegate {
    /// Dispatches every message.
    package func admit(_ header: FrameHeader, on connection: MsgTransConnection) -> MsgTransAdmission {
        .dispatch
    }

    /// Ignores one-way messages.
    package func handleOneWay(_ message: MsgTransMessage, on connection: MsgTransConnection) async {}

    /// Does nothing.
    package func connectionDidClose(_ connection: MsgTransConnection, reason: MsgTransRuntimeError) {}

    /// Keeps the connection open.
    package func closesOnUnmatchedResponse(_ header: FrameHeader, on connection: MsgTransConnection) -> Bool {
        false
    }
}

/// A delegate that answers every request with a closure and admits everything.
package struct MsgTransRequestHandler: MsgTransConnectionDelegate {
    private let handler: @Sendable (MsgTransMessage, MsgTransConnection) async throws -> MsgTransReply

    /// Creates a delegate that answers requests with `handler`.
    package init(_ handler: @escaping @Sendable (MsgTransMessage, MsgTransConnection) async throws -> MsgTransReply) {
        self.handler = handler
    }

    package func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async throws
        -> MsgTransReply
    {
        try await handler(request, connection)
    }
}
