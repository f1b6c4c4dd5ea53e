/// What the runtime does with an inbound request or one-way message, as decided by
/// ``MsgTransConnectionDelegate/admit(_:on:)`` on the read path.
package enum MsgTransAdmission: Sendable, Equatable {
    /// Hand the message to the handler; it runs concurrently with others.
    case dispatch
    /// Hand the message to the handler and admit nothing else until it has answered.
    ///
    /// Requests and one-way messages decoded meanwhile are held in arrival order (responses still
    /// complete this side's requests, so the handler may make reverse requests). Once the handler
    /// has returned and its response is queued, the held messages go through ``MsgTransConnectionDelegate/admit(_:on:)``
    /// one by one, so they see whatever state the handler left. Held messages count against
    /// ``MsgTransConfiguration/maxConcurrentInboundRequests``.
    case dispatchExclusively
    /// Answer at once with this reply and do not run a handler. For a one-way message the reply
    /// is sent as a Response with the one-way message's id and biz type. The reply is framed and
    /// compressed on the event loop thread, so keep it small.
    case respond(MsgTransReply)
    /// Close the connection at once: no response, no dispatch, nothing further is read, and
    /// output not yet written is discarded.
    case close
    /// Drop the message without an answer (a request then gets no response: use sparingly).
    case ignore
}
