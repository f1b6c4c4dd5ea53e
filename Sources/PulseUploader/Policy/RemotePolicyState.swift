import Synchronization

/// What the uploader knows about the remote policy, shared by its tasks.
final class RemotePolicyState: Sendable {
    struct Values: Sendable {
        /// The configured policy the snapshot's values are laid over.
        var base: UploadPolicy
        /// The revision applied (persisted as the `policy_revision` setting); 0 for none.
        var applied: Int64
        /// The highest `Apsio-Policy-Revision` seen on an upload response.
        var advertised: Int64 = 0
        /// The newest revision refused (capabilities or values); not fetched again.
        var rejected: Int64 = 0
        /// When the policy was last fetched (epoch ms), for the periodic refresh.
        var lastFetch: Int64?
    }

    let capabilities: Set<String>
    let refreshIntervalMilliseconds: Int64
    /// The fields of the base policy a remote policy does not replace.
    let explicit: Set<UploadPolicy.Field>
    private let values: Mutex<Values>

    init(
        base: UploadPolicy, applied: Int64, capabilities: Set<String>, refreshIntervalMilliseconds: Int64,
        explicit: Set<UploadPolicy.Field>
    ) {
        self.capabilities = capabilities
        self.explicit = explicit
        self.refreshIntervalMilliseconds = refreshIntervalMilliseconds
        values = Mutex(Values(base: base, applied: applied))
    }

    func read() -> Values { values.withLock { $0 } }

    func update<T>(_ body: (inout Values) -> T) -> T { values.withLock { body(&$0) } }

    /// Records an `Apsio-Policy-Revision` header value.
    func advertise(_ header: String?) {
        guard let header, let revision = Int64(header) else { return }
        values.withLock { $0.advertised = max($0.advertised, revision) }
    }

    /// Whether an advertised revision is newer than both the applied and the refused one.
    var newerAdvertised: Bool {
        values.withLock { $0.advertised > $0.applied && $0.advertised > $0.rejected }
    }
}
