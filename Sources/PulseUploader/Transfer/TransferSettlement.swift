/// What ``Uploader/settle(_:_:)`` did with a transfer's result.
public struct TransferSettlement: Sendable, Equatable {
    /// Whether the result changed the queue.
    public enum Effect: String, Sendable, CaseIterable {
        /// The response table was applied: the batch was deleted, dropped, held or rescheduled.
        case applied
        /// A newer claim holds the batch (the lease expired and the batch was claimed again), or this lease
        /// was settled before: a non-2xx result changes and counts nothing; the newer attempt decides.
        case superseded
        /// The batch is no longer queued (delivered through another claim, dropped or purged): nothing
        /// changes and nothing is counted.
        case gone
    }

    /// What the result means, by the response table every sender shares.
    public enum Verdict: String, Sendable, CaseIterable {
        /// 2xx: stored.
        case delivered
        /// 2xx with `Apsio-Duplicate: true`: an earlier attempt was stored.
        case duplicate
        /// 2xx with an OTLP partial success: stored, some records rejected.
        case partiallyDelivered
        /// 400, 413, 415: can never succeed; the batch is dropped.
        case rejected
        /// 401, 403: the queue is held until the policy is refreshed.
        case authenticationRequired
        /// 429, 503 with a usable `Retry-After`: the queue is held until then.
        case throttled
        /// Anything else, or no response: retried after a jittered backoff.
        case retryLater
    }

    /// The lease the result belonged to.
    public var lease: BatchLease
    /// Whether it changed the queue.
    public var effect: Effect
    /// What it means.
    public var verdict: Verdict

    /// Creates a settlement.
    public init(lease: BatchLease, effect: Effect, verdict: Verdict) {
        self.lease = lease
        self.effect = effect
        self.verdict = verdict
    }
}
