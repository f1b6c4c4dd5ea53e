/// The outcome of ``Uploader/refreshPolicy()``.
public enum PolicyRefresh: Sendable, Equatable {
    /// A newer snapshot was applied; its revision is persisted in the queue.
    case applied(revision: Int64)
    /// The gateway serves the snapshot already applied (304, or a revision not newer).
    case unchanged(revision: Int64)
    /// The snapshot was refused and the previous policy stays: it requires capabilities this uploader
    /// lacks, or its values are out of range. Recorded in ``UploaderStatus/policyError`` and the error log.
    case rejected(revision: Int64, reason: String)
    /// No snapshot was obtained: the HTTP status (404: the upstream defines no policy for the app; 503: the
    /// gateway has none cached and cannot ask; 401/403: refused), or `nil` when no response arrived.
    case unavailable(status: Int?)
}
