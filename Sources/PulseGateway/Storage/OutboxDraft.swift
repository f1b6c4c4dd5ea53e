/// What a Pulse batch in the outbox carries: events or crash reports.
package enum OutboxBatchKind: Int, Sendable, Hashable, CustomStringConvertible {
    /// A `CLIENT_EVENT_BATCH_UPLOAD` payload.
    case events = 1
    /// A `CLIENT_CRASH_BATCH_UPLOAD` payload.
    case crashes = 2

    package var description: String { self == .events ? "events" : "crashes" }
}

/// One Pulse batch produced by the mapping, ready to be stored as an outbox row.
struct OutboxDraft: Sendable, Equatable {
    /// The App ID (`identity.projectId`).
    var app: String
    /// A stable key of the device identity the batch is sent under (one upstream connection each).
    var identityKey: String
    /// The identity as CONNECT needs it, JSON (see ``ConnectIdentity``).
    var identity: [UInt8]
    /// Events or crashes.
    var kind: OutboxBatchKind
    /// The Pulse `batchId` inside the payload.
    var pulseBatchID: String
    /// The complete request payload (plaintext JSON envelope).
    var payload: [UInt8]
    /// The msgtrans compression byte chosen for this payload (fixed for every retry).
    var compression: UInt8
    /// The number of events or crash reports in the payload.
    var recordCount: Int
    /// For crash batches: the same records as `Crash` events, length-prefixed (see
    /// ``EventChunks``), sent in event batches when the upstream answers 501.
    var fallback: [UInt8]?

    /// Crash batches are sent ahead of event batches of the same identity.
    var priority: Int { kind == .crashes ? 0 : 1 }
}

/// An outbox row read back for forwarding.
struct OutboxRow: Sendable, Equatable {
    var seq: Int64
    var app: String
    var identityKey: String
    var kind: OutboxBatchKind
    var priority: Int
    var pulseBatchID: String
    /// The payload in wire form: the msgtrans frame payload, sent as it is (``StoredPayload``).
    var payload: [UInt8]
    /// The msgtrans compression byte of `payload`.
    var compression: UInt8
    var recordCount: Int
    var fallback: [UInt8]?
    var httpBatchID: String
    var attempts: Int
    var nextAttemptAt: Int64
    var createdAt: Int64
    /// The plaintext length of `payload`.
    var plainCount: Int
    /// The `X-Request-Id` of the HTTP request that stored it (`nil` before migration `007`).
    var requestID: String? = nil

    /// The stored payload (for the crash fallback, which needs the plaintext).
    var storedPayload: StoredPayload {
        StoredPayload(bytes: payload, compression: Int(compression), plainCount: plainCount)
    }
}
