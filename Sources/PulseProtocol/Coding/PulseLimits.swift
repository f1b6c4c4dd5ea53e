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
    /// Payloads of at least this many bytes are compressed; smaller ones never are.
    public static let compressionMinBytes = 1_024
    /// The largest decompressed payload any receiver accepts, in bytes (16 MiB).
    public static let maxDecompressedBytes = 16 << 20
}
