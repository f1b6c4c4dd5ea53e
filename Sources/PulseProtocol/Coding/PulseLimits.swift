/// Size and count limits of the Pulse payloads, as used by the SDK and enforced by PulseGate.
public enum PulseLimits {
    /// The most events in one `CLIENT_EVENT_BATCH_UPLOAD`.
    public static let eventBatchMaxEvents = 64
    /// The largest uncompressed event-batch JSON envelope, in bytes.
    public static let eventBatchMaxBytes = 65_536
    /// The most crash reports in one `CLIENT_CRASH_BATCH_UPLOAD`.
    public static let crashBatchMaxCrashes = 16
    /// The largest uncompressed crash-batch JSON envelope, in bytes (crash stacks are large).
    public static let crashBatchMaxBytes = 1_048_576
    /// The most attachment metadata entries per crash report.
    public static let crashMaxAttachments = 16
    /// The bytes of an event or crash batch envelope kept for everything but its items: the envelope's keys,
    /// the batch id and the sender's `identity` object.
    public static let envelopeReserveBytes = 8_192
    /// The largest single event a sender hands over, in bytes: what an event batch (``eventBatchMaxBytes``)
    /// leaves after ``envelopeReserveBytes``. PulseGate drops a larger mapped event as oversized; the uploader
    /// refuses, at enqueue, a record whose OTLP/JSON encoding is larger than this (the mapped event is never
    /// larger than that encoding plus a few fixed fields, which the reserve covers).
    public static let eventMaxBytes = eventBatchMaxBytes - envelopeReserveBytes
    /// The largest single crash report a sender hands over, in bytes (``crashBatchMaxBytes`` less the reserve).
    public static let crashMaxBytes = crashBatchMaxBytes - envelopeReserveBytes
    /// The largest attachment content, in bytes (41,472): an attachment travels as one event whose body is the
    /// content in base64 (4 bytes per 3), and 2 KiB of the event are kept for its name, type, size, digest
    /// and ids, so the event stays within ``eventMaxBytes``.
    public static let attachmentMaxBytes = (eventMaxBytes - 2_048) / 4 * 3
    /// Payloads of at least this many bytes are compressed; smaller ones never are.
    public static let compressionMinBytes = 1_024
    /// The largest decompressed payload any receiver accepts, in bytes (16 MiB).
    public static let maxDecompressedBytes = 16 << 20
}
