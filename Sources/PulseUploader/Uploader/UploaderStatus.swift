public import PulseProtocol

/// A snapshot of the queue for `pulsegate upload status` and diagnostics.
public struct UploaderStatus: Sendable {
    /// The queue's contents for one class.
    public struct ClassDepth: Sendable, Equatable {
        /// The class.
        public var recordClass: RecordClass
        /// Records waiting to be sealed.
        public var waitingRecords: Int64
        /// Encoded bytes of the waiting records.
        public var waitingBytes: Int64
        /// Sealed batches.
        public var batches: Int64
        /// Records inside the sealed batches.
        public var batchedRecords: Int64
        /// Stored (compressed) bytes of the sealed batches.
        public var batchBytes: Int64
    }

    /// Drops under one reason.
    public struct DropCount: Sendable, Equatable {
        /// Records dropped.
        public var records: Int64
        /// Whole batches dropped.
        public var batches: Int64
        /// Bytes dropped.
        public var bytes: Int64
    }

    /// One recent upload error.
    public struct ErrorEntry: Sendable, Equatable {
        /// When it happened (epoch ms).
        public var atMilliseconds: Int64
        /// The batch, if the error belongs to one.
        public var batchId: String?
        /// The HTTP status, if a response arrived.
        public var status: Int?
        /// What happened.
        public var message: String
    }

    /// Depth per class, in drop order.
    public var classes: [ClassDepth]
    /// Records in the queue (waiting and sealed).
    public var totalRecords: Int64
    /// Bytes in the queue, as counted against the byte cap.
    public var totalBytes: Int64
    /// Age of the oldest record in the queue (ms), if any.
    public var oldestAgeMilliseconds: Int64?
    /// When the next upload may be attempted (epoch ms), if anything is sealed.
    public var nextAttemptMilliseconds: Int64?
    /// Until when `Retry-After` holds the queue (epoch ms), if it does.
    public var retryAfterHoldUntilMilliseconds: Int64?
    /// Until when a 401/403 holds the queue (epoch ms), if it does.
    public var authenticationHoldUntilMilliseconds: Int64?
    /// Drops by reason (every reason listed, zeros included).
    public var drops: [DropReason: DropCount]
    /// The most recent errors, newest first.
    public var recentErrors: [ErrorEntry]
    /// Whether consent is granted.
    public var consentGranted: Bool
    /// Whether the kill switch is on.
    public var killSwitch: Bool
    /// Whether the app is in the background (`pulsegate upload background`).
    public var inBackground: Bool
    /// `device.id` and `app.installation.id` in use.
    public var deviceId: String
    /// `app.installation.id` in use.
    public var installationId: String
    /// The revision of the remote policy applied (0: none), see ``Uploader/refreshPolicy()``.
    public var policyRevision: Int64 = 0
    /// Why the newest remote policy was refused (missing capabilities, invalid values), until one applies.
    public var policyError: String?
    /// Each effective policy value of this uploader and where it comes from (see ``PolicySource``).
    package var policySettings: [PolicySetting] = []
    /// Until when the endpoint backs off after failures of its own (no answer, 408, 429, 5xx), if it does.
    public var endpointBackoffUntilMilliseconds: Int64?
    /// The endpoint's consecutive failures (0 after any other answer).
    public var endpointFailures = 0
    /// Batches an out-of-process transfer holds under a lease that has not lapsed (their results are
    /// settled by ``Uploader/settle(_:_:)``).
    public var batchesWithTransfers = 0
    /// The diagnostics level of this uploader's policy.
    public var diagnosticsLevel: DiagnosticsLevel = .batchSummaries
    /// The cumulative delivery counters, the batch sequence and the latest upload errors.
    public var diagnostics = DiagnosticsSnapshot()
    /// The newest logged API calls (at most ``recentCallLimit``), newest first; empty unless a process on this
    /// queue ran at ``DiagnosticsLevel/callDetails`` or above.
    public var recentCalls: [CallLogEntry] = []

    /// The most calls ``recentCalls`` holds.
    public static let recentCallLimit = 50
}

/// What one send or drain pass did.
public struct SendReport: Sendable, Equatable {
    /// Requests made.
    public var attempted = 0
    /// Batches delivered (including duplicates and partial successes).
    public var delivered = 0
    /// Of those, answered as duplicates (`Apsio-Duplicate: true`).
    public var duplicates = 0
    /// Records rejected inside partially successful batches.
    public var partiallyRejectedRecords: Int64 = 0
    /// Batches dropped after 400, 413 or 415.
    public var rejected = 0
    /// Attempts that will be retried (network errors, 5xx, 429/503).
    public var retrying = 0
    /// Whether a 401/403 now holds the queue.
    public var authenticationHeld = false
    /// Due batches left waiting because of network or power conditions.
    public var deferred = 0
    /// When something may next be attempted (epoch ms), if anything is left.
    public var nextAttemptMilliseconds: Int64?
    /// Why nothing more was sent, if the queue is held.
    public var blockedBy: String?
    /// Sealed batches still queued when the pass ended (set by ``Uploader/flush()``; `nil` elsewhere).
    public var remainingBatches: Int?

    /// Creates an empty report.
    public init() {}
}
