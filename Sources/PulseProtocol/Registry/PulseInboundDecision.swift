/// What a peer does with an inbound request or one-way frame, decided from its `biz_type`, packet
/// kind and the session phase alone (before the payload is looked at).
public enum PulseInboundDecision: Sendable, Hashable {
    /// Run the business handler for this type; it answers with exactly one response.
    case dispatch(PulseBizType)
    /// Do not run a handler: answer with one response carrying this code, the frame's `message_id`
    /// and its `biz_type` echoed. The connection stays open.
    case reject(PulseResponseCode, message: String)
    /// Protocol violation: close the connection immediately and send nothing.
    case close(reason: String)
}
