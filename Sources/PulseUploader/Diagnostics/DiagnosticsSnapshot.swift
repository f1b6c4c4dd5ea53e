import PulseProtocol

/// The uploader's cumulative delivery counters, as kept in the queue and sent in the diagnostics record.
///
/// The counting session is the queue's lifetime: the counters start when the data directory is created and
/// survive restarts, `kill -9` and reboots (they are updated in the same transactions as the batches they
/// count). They count only while the policy's ``DiagnosticsLevel`` is ``DiagnosticsLevel/batchSummaries`` or
/// above; drops are always counted.
public struct DiagnosticsSnapshot: Sendable, Equatable {
    /// One failed (or partially rejected) upload attempt.
    public struct ErrorEntry: Sendable, Equatable {
        /// The HTTP status, or 0 when no response arrived.
        public var code: Int
        /// `http` (an error status), `transport` (no response: refused, dropped, timed out) or
        /// `partialSuccess` (2xx with rejected records).
        public var domain: String
        /// What happened, at most 200 characters; never payload bytes.
        public var description: String
        /// The sequence number of the batch that was sent (0 for a batch sealed before sequences existed).
        public var batchNumber: Int64
        /// When it happened (epoch ms).
        public var atMilliseconds: Int64
    }

    /// When the counting session started (epoch ms): when the queue was created.
    public var sessionStartedMilliseconds: Int64 = 0
    /// The sequence number of the most recently sealed batch (0 before the first).
    public var lastSequence: Int64 = 0
    /// Upload attempts (HTTP requests, retries included), counted when each is claimed.
    public var batchesAttempted: Int64 = 0
    /// Attempts answered 2xx (duplicates and partial successes included).
    public var batchesSentSuccessfully: Int64 = 0
    /// Attempts that failed: an error status or no response.
    public var batchesWithErrors: Int64 = 0
    /// Error entries ever recorded (failed attempts plus partial successes).
    public var totalErrors: Int64 = 0
    /// The latest errors, newest first, at most 10.
    public var errorHistory: [ErrorEntry] = []
    /// Records dropped, by reason (every reason listed).
    public var droppedRecords: [DropReason: Int64] = [:]

    /// Creates an empty snapshot.
    public init() {}

    init(
        sessionStartedMilliseconds: Int64, lastSequence: Int64, batchesAttempted: Int64,
        batchesSentSuccessfully: Int64, batchesWithErrors: Int64, totalErrors: Int64, errorHistory: [ErrorEntry],
        droppedRecords: [DropReason: Int64]
    ) {
        self.sessionStartedMilliseconds = sessionStartedMilliseconds
        self.lastSequence = lastSequence
        self.batchesAttempted = batchesAttempted
        self.batchesSentSuccessfully = batchesSentSuccessfully
        self.batchesWithErrors = batchesWithErrors
        self.totalErrors = totalErrors
        self.errorHistory = errorHistory
        self.droppedRecords = droppedRecords
    }
}
