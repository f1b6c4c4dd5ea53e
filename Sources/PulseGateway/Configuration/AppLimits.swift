import PulseJSON

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
package typealias AppLimits = PerAppSettings<AppLimit>

extension PerAppSettings where Entry == AppLimit {
    /// The limits of one app.
    package typealias Limit = AppLimit

    /// The limit in force for `app`.
    package func limit(for app: String) -> Limit { entry(for: app) }

    /// Reads the `appLimits` config object, recording every problem (with its key path) in
    /// `reader`; `nil` when there was one.
    init?(reading node: JSONNode, _ reader: inout ConfigurationReader) {
        self.init(reading: node, path: "appLimits", &reader, entry: AppLimit.init(reading:path:_:))
    }

    /// Whether any app is limited at all.
    var isEmpty: Bool { `default`.isUnlimited && apps.values.allSatisfy(\.isUnlimited) }
}

/// The limits of one app (``AppLimits``); `nil` fields are unlimited (or inherited from the
/// `default` entry).
package struct AppLimit: AppOverridable {
    /// Outbox rows (Pulse batches) the app may have waiting.
    package var outboxBatches: Int?
    /// Outbox payload bytes the app may have waiting.
    package var outboxBytes: Int?
    /// Sustained intake requests per second (a token bucket refilled at this rate).
    package var requestsPerSecond: Double?
    /// The bucket's size: requests accepted at once after a quiet period. Default: the rate
    /// rounded up, at least 1.
    package var burst: Int?

    /// Nothing limited.
    package init() {}

    /// Creates a limit.
    package init(
        outboxBatches: Int? = nil, outboxBytes: Int? = nil, requestsPerSecond: Double? = nil, burst: Int? = nil
    ) {
        self.outboxBatches = outboxBatches
        self.outboxBytes = outboxBytes
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
    }

    /// `self` with the fields it leaves unset taken from `base`.
    package func over(_ base: AppLimit) -> AppLimit {
        AppLimit(
            outboxBatches: outboxBatches ?? base.outboxBatches, outboxBytes: outboxBytes ?? base.outboxBytes,
            requestsPerSecond: requestsPerSecond ?? base.requestsPerSecond,
            burst: burst ?? base.burst)
    }

    /// Reads one entry at `path`, recording its problems in `reader` (the fields read so far when
    /// there were some).
    init(reading node: JSONNode, path: String, _ reader: inout ConfigurationReader) {
        self.init()
        guard reader.object(path, node) else { return }
        for (key, setting) in node.members {
            let name = "\(path).\(key)"
            switch key {
            case "outboxBatches": outboxBatches = reader.positive(name, setting)
            case "outboxBytes": outboxBytes = reader.positive(name, setting)
            case "requestsPerSecond": requestsPerSecond = reader.positiveNumber(name, setting)
            case "burst": burst = reader.positive(name, setting)
            default: reader.fail(name, "unknown config key")
            }
        }
    }

    /// The bucket size in force: ``burst``, else the rate rounded up (at least 1).
    var bucketSize: Double {
        if let burst { return Double(burst) }
        return max(1, (requestsPerSecond ?? 1).rounded(.up))
    }

    /// Whether nothing is limited.
    var isUnlimited: Bool { outboxBatches == nil && outboxBytes == nil && requestsPerSecond == nil }
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
