/// Per-app limits (config key `appLimits`): a share of the outbox and an optional request rate,
/// so one app that floods, or whose upstream path is slow, cannot take the outbox from the others.
///
/// ```json
/// "appLimits": {
///   "default": {"outboxBatches": 100000, "outboxBytes": 536870912},
///   "apps": {"shop": {"outboxBatches": 400000, "requestsPerSecond": 50, "burst": 100}}
/// }
/// ```
///
/// Every field is optional; an app's entry overrides the default field by field. An app over its
/// outbox share gets 429 with `Retry-After` (``GatewayPolicy/retryAfterSeconds``) while the
/// others are still accepted; an app over its rate gets 429 with the seconds until its token
/// bucket has a token again. The global caps (`outboxMaxBatches`, `outboxMaxBytes`) still apply
/// to everyone. Reloaded on SIGHUP.
public struct AppLimits: Sendable, Equatable {
    /// The limits of one app; `nil` fields are unlimited (or inherited from ``AppLimits/default``).
    public struct Limit: Sendable, Equatable {
        /// Outbox rows (Pulse batches) the app may have waiting.
        public var outboxBatches: Int?
        /// Outbox payload bytes the app may have waiting.
        public var outboxBytes: Int?
        /// Sustained intake requests per second (a token bucket refilled at this rate).
        public var requestsPerSecond: Double?
        /// The bucket's size: requests accepted at once after a quiet period. Default: the rate
        /// rounded up, at least 1.
        public var burst: Int?

        /// Creates a limit.
        public init(
            outboxBatches: Int? = nil, outboxBytes: Int? = nil, requestsPerSecond: Double? = nil, burst: Int? = nil
        ) {
            self.outboxBatches = outboxBatches
            self.outboxBytes = outboxBytes
            self.requestsPerSecond = requestsPerSecond
            self.burst = burst
        }

        /// `self` with the fields it leaves unset taken from `base`.
        func over(_ base: Limit) -> Limit {
            Limit(
                outboxBatches: outboxBatches ?? base.outboxBatches, outboxBytes: outboxBytes ?? base.outboxBytes,
                requestsPerSecond: requestsPerSecond ?? base.requestsPerSecond,
                burst: burst ?? base.burst)
        }

        /// The bucket size in force: ``burst``, else the rate rounded up (at least 1).
        var bucketSize: Double {
            if let burst { return Double(burst) }
            return max(1, (requestsPerSecond ?? 1).rounded(.up))
        }

        /// Whether nothing is limited.
        var isUnlimited: Bool { outboxBatches == nil && outboxBytes == nil && requestsPerSecond == nil }
    }

    /// What applies to every app without an entry of its own (and fills its entry's gaps).
    public var `default`: Limit
    /// Entries by App ID.
    public var apps: [String: Limit]

    /// Creates limits; by default nothing is limited.
    public init(default: Limit = Limit(), apps: [String: Limit] = [:]) {
        self.default = `default`
        self.apps = apps
    }

    /// The limit in force for `app`.
    public func limit(for app: String) -> Limit {
        apps[app].map { $0.over(`default`) } ?? `default`
    }

    /// Whether any app is limited at all.
    var isEmpty: Bool { `default`.isUnlimited && apps.values.allSatisfy(\.isUnlimited) }
}

extension GatewayPolicy {
    /// The apps the configuration names (`allowedAppIds` and the keys of `appLimits.apps`), which
    /// get their own `app` label in the per-app metrics (``AppMetrics``; every other app counts as
    /// `other`); `nil` when it names none, and ``AppMetrics`` labels the first apps it sees.
    var labelledApps: Set<String>? {
        let named = Set(allowedAppIDs ?? []).union(appLimits.apps.keys)
        return named.isEmpty ? nil : named
    }
}
