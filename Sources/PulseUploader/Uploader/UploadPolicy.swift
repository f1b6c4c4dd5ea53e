public import PulseKit
public import PulseProtocol

/// The tunable limits of the uploader; the remote policy (`GET /v1/policy`, see `docs/policy.md`) replaces
/// them as a whole.
///
/// Every value has a documented default (see `docs/uploader.md`). ``Uploader/apply(policy:)`` validates and
/// applies a policy atomically.
public struct UploadPolicy: Sendable, Equatable {
    /// Seal after this long in the foreground since the oldest unsealed record (default 10 s).
    public var sealIntervalMilliseconds: Int64 = 10_000
    /// Seal once this many bytes of encoded records are waiting; also the largest uncompressed batch body
    /// (default 256 KiB). A single record larger than this is dropped as `oversized`.
    public var maximumBatchBytes: Int = 256 * 1024
    /// Seal once this many records are waiting; also the most records in one batch (default 512).
    public var maximumBatchRecords: Int = 512
    /// The largest attachment file accepted (default and most: `PulseLimits.attachmentMaxBytes`, 41,472
    /// bytes, the largest content whose event a gateway forwards); larger files are refused as `oversized`.
    public var maximumAttachmentBytes: Int = PulseLimits.attachmentMaxBytes
    /// The queue's byte cap: encoded records waiting plus stored batch bodies (default 32 MiB).
    public var maximumQueueBytes: Int64 = 32 * 1024 * 1024
    /// The queue's record cap: records waiting plus records inside stored batches (default 100,000).
    public var maximumQueueRecords: Int64 = 100_000
    /// Batches (and waiting records) older than this are dropped instead of sent (default 7 days).
    public var maximumBatchAgeMilliseconds: Int64 = 7 * 24 * 3_600 * 1_000
    /// The first backoff ceiling after a failure (default 1 s); doubles per attempt.
    public var backoffBaseMilliseconds: Int64 = 1_000
    /// The largest backoff ceiling (default 5 min).
    public var backoffCapMilliseconds: Int64 = 300_000
    /// The most upload attempts per ``attemptWindowMilliseconds`` for this device (default 60).
    public var maximumAttemptsPerWindow: Int = 60
    /// The window of ``maximumAttemptsPerWindow`` (default 60 s).
    public var attemptWindowMilliseconds: Int64 = 60_000
    /// The most uploads in flight at once (default 2).
    public var maximumInFlight: Int = 2
    /// Batches whose stored body is at least this large go through the background path (default 512 KiB).
    public var largeUploadBytes: Int = 512 * 1024
    /// How long a claimed upload is protected from other senders; after a crash mid-upload the batch is sent
    /// again (same id, same bytes) once this expires (default 2 min).
    public var leaseMilliseconds: Int64 = 120_000
    /// How long 401/403 hold the queue when no policy refresh releases it earlier (default 15 min).
    public var authenticationHoldMilliseconds: Int64 = 900_000
    /// The compression of sealed batches (default gzip, which every OTLP/HTTP server accepts).
    public var encoding: BodyEncoding = .gzip
    /// The policy's kill switch: on purges the queue and stops collection until it is cleared.
    public var killSwitch = false
    /// How much the uploader records about its own delivery (default ``DiagnosticsLevel/batchSummaries``);
    /// a new level takes effect from the next operation on, without a restart.
    public var diagnosticsLevel: DiagnosticsLevel = .batchSummaries
    /// The share of records of each Pulse kind (``TelemetryRecord/pulseKind``) that ``Uploader/record(_:)``
    /// keeps, in 0...1; a kind not listed is kept at 1.0. Each record is kept with that probability, drawn
    /// from the uploader's ``RandomSource`` (so tests inject the outcome).
    public var sampling: [PulseEventKind: Double] = [:]
    /// The Pulse kinds ``Uploader/record(_:)`` accepts; empty (the default) accepts every kind.
    public var collectKinds: Set<PulseEventKind> = []

    /// Creates the default policy.
    public init() {}

    /// Checks that every value is in range.
    ///
    /// - Throws: ``UploaderError/Code/configuration`` naming the first bad value.
    public func validate() throws(UploaderError) {
        func require(_ condition: Bool, _ name: String) throws(UploaderError) {
            if !condition {
                throw UploaderError(.configuration, "policy value \(name) is out of range")
            }
        }
        try require(sealIntervalMilliseconds >= 0, "sealIntervalMilliseconds")
        try require(maximumBatchBytes >= 1_024, "maximumBatchBytes")
        try require(maximumBatchRecords >= 1, "maximumBatchRecords")
        try require(
            maximumAttachmentBytes >= 1 && maximumAttachmentBytes <= PulseLimits.attachmentMaxBytes,
            "maximumAttachmentBytes")
        try require(maximumQueueBytes >= Int64(maximumBatchBytes), "maximumQueueBytes")
        try require(maximumQueueRecords >= 1, "maximumQueueRecords")
        try require(maximumBatchAgeMilliseconds > 0, "maximumBatchAgeMilliseconds")
        try require(backoffBaseMilliseconds >= 1, "backoffBaseMilliseconds")
        try require(backoffCapMilliseconds >= backoffBaseMilliseconds, "backoffCapMilliseconds")
        try require(maximumAttemptsPerWindow >= 1, "maximumAttemptsPerWindow")
        try require(attemptWindowMilliseconds >= 1, "attemptWindowMilliseconds")
        try require(maximumInFlight >= 1 && maximumInFlight <= 16, "maximumInFlight")
        try require(largeUploadBytes >= 1, "largeUploadBytes")
        try require(leaseMilliseconds >= 1_000, "leaseMilliseconds")
        try require(authenticationHoldMilliseconds >= 1_000, "authenticationHoldMilliseconds")
        for (kind, rate) in sampling {
            try require(rate.isFinite && rate >= 0 && rate <= 1, "sampling.\(kind.rawValue)")
        }
    }
}

extension UploadPolicy {
    /// The full-jitter backoff of failed uploads: PulseKit's one ``PulseKit/Backoff`` from
    /// ``backoffBaseMilliseconds`` up to ``backoffCapMilliseconds``.
    var backoff: Backoff {
        Backoff(base: .milliseconds(backoffBaseMilliseconds), cap: .milliseconds(backoffCapMilliseconds))
    }
}
