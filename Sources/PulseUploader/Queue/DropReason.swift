/// Why queued data was dropped instead of delivered. Every drop is counted under one reason.
public enum DropReason: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The queue reached its byte or record cap.
    case cap
    /// A batch (or unsealed record) was older than the policy's maximum age.
    case age
    /// Consent was withdrawn: the whole queue was purged, or a record was refused while it stays withdrawn.
    case consent
    /// The policy's kill switch was on: the queue was purged, or a record was refused while it stays on.
    case killSwitch
    /// A single record was larger than the largest batch (or attachment) the policy allows.
    case oversized
    /// The gateway answered 400, 413 or 415: the batch can never succeed.
    case rejected
    /// The gateway accepted a batch but rejected some of its records (OTLP partial success).
    case partiallyRejected

    public var description: String { rawValue }
}
