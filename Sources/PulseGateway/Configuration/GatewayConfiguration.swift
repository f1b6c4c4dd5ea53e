package import PulseHTTP
package import PulseJSON
import PulseKit
import PulseStorage

/// Everything the gateway needs to run. Built by `pulsegate serve` from flags, environment and
/// the config file (see ``ConfigurationFile``); tests build it directly.
package struct GatewayConfiguration: Sendable, CheckedSettings {
    /// Where the HTTP intake listens: a numeric host (`127.0.0.1`, `::1`, `0.0.0.0`) and a port; 0
    /// picks a free port.
    package var listenHost: String
    /// The HTTP port; 0 picks a free port (see ``RunningGateway/httpPort``).
    package var listenPort: Int
    /// The upstream Pulse server (`host`, `port`), or `nil` to start the reference ingest server
    /// in-process on loopback.
    package var upstream: UpstreamAddress?
    /// The directory holding `gateway.sqlite` (and the embedded ingest server's data).
    package var dataDirectory: String
    /// Settings that can change while running (SIGHUP reloads them from the config file).
    package var policy: GatewayPolicy
    /// Where the dedup table, outbox and dead letters live: `nil` for SQLite in ``dataDirectory``
    /// (the embedded default), or a PostgreSQL connection string (`postgres://…` or libpq
    /// `key=value` pairs) shared by a fleet of gateways (`--store`, `PULSEGATE_STORE`, config
    /// key `store`; docs/fleet.md).
    package var store: String?
    /// Fleet mode: how long an identity's forwarding lease lasts without renewal; a dead node's
    /// identities are taken over after at most this plus ``ForwardingSettings/rescanInterval``
    /// (config key `storeLeaseMs`, default 10 s).
    package var storeLease: Duration = .seconds(10)
    /// The largest decoded request body, in bytes (413 above it).
    package var maxBodyBytes: Int
    /// The memory, in bytes, that requests in flight may reserve together (default 512 MiB): their
    /// buffered wire bodies plus the estimated working set of decoding, parsing and mapping them
    /// (``GatewayIntake/workingSet(format:decodedBytes:)``). A request that does not fit waits up to
    /// a second, then gets 503 with `Retry-After`.
    package var requestMemoryBudgetBytes: Int
    /// libmicrohttpd event-loop threads.
    package var httpThreads: Int
    /// The most HTTP connections at once.
    package var httpConnectionLimit: Int
    /// How long an HTTP connection may make no progress before it is closed.
    package var httpIdleTimeout: Duration
    /// How long a request's line and headers may take to arrive (slowloris protection; see
    /// `HTTPServerConfiguration.headerTimeout`). Config key `httpHeaderTimeoutSeconds`.
    package var httpHeaderTimeout: Duration
    /// How long a request body may take before ``httpMinBodyBytesPerSecond`` extends it. Config key
    /// `httpBodyTimeoutSeconds`.
    package var httpBodyTimeout: Duration
    /// Every this many body bytes received extend ``httpBodyTimeout`` by one second (the minimum
    /// average upload rate). Config key `httpMinBodyBytesPerSecond`.
    package var httpMinBodyBytesPerSecond: Int
    /// How long SIGTERM waits for in-flight requests.
    package var shutdownGracePeriod: Duration
    /// How often expired dedup keys are pruned, and how many per slice.
    package var pruneInterval: Duration
    /// Expired dedup rows deleted per pruning transaction.
    package var pruneSliceSize: Int
    /// Upstream connection and retry settings.
    package var forwarding: ForwardingSettings
    /// The TLS certificate and key the HTTP intake serves (`--tls-cert`/`--tls-key`, config keys
    /// `tlsCert`/`tlsKey`), or `nil` for plain HTTP. Read at start and again on SIGHUP.
    package var tls: TLSFiles?
    /// How long, in microseconds, an intake commit may wait for other requests to share its fsync
    /// (default 0: off; at most ``commitGatherMicrosecondsRange``'s upper bound). It waits only with
    /// evidence of concurrency (the previous commit carried two or more requests, or two are queued) and
    /// when requests are arriving closer together than this, so a sequential client is not delayed. Off by
    /// default because the measurements so far (docs/operations.md) raised jobs per fsync but did not
    /// show a clear gain in requests per second or CPU per request. Config key `commitGatherMicroseconds`.
    package var commitGatherMicroseconds: Int
    /// The gathering ends as soon as this many requests are queued for the commit (default 32, at
    /// most 512, the group-commit batch limit). Config key `commitGatherJobs`.
    package var commitGatherJobs: Int

    /// The accepted ``commitGatherMicroseconds``: up to 10 ms.
    package static let commitGatherMicrosecondsRange = 0...10_000
    /// The accepted ``commitGatherJobs``.
    package static let commitGatherJobsRange = 1...512

    /// Creates a configuration with defaults for everything but the data directory.
    package init(
        dataDirectory: String, listenHost: String = "127.0.0.1", listenPort: Int = 4318,
        upstream: UpstreamAddress? = nil, policy: GatewayPolicy = GatewayPolicy(),
        maxBodyBytes: Int = 16 * 1024 * 1024, requestMemoryBudgetBytes: Int = 512 * 1024 * 1024, httpThreads: Int = 2,
        httpConnectionLimit: Int = 1024,
        httpIdleTimeout: Duration = .seconds(30), httpHeaderTimeout: Duration = .seconds(10),
        httpBodyTimeout: Duration = .seconds(20), httpMinBodyBytesPerSecond: Int = 500,
        shutdownGracePeriod: Duration = .seconds(10),
        pruneInterval: Duration = .seconds(60), pruneSliceSize: Int = 500,
        forwarding: ForwardingSettings = ForwardingSettings(), commitGatherMicroseconds: Int = 0,
        commitGatherJobs: Int = 32
    ) {
        self.commitGatherMicroseconds = commitGatherMicroseconds
        self.commitGatherJobs = commitGatherJobs
        self.dataDirectory = dataDirectory
        self.listenHost = listenHost
        self.listenPort = listenPort
        self.upstream = upstream
        self.policy = policy
        self.maxBodyBytes = maxBodyBytes
        self.requestMemoryBudgetBytes = requestMemoryBudgetBytes
        self.httpThreads = httpThreads
        self.httpConnectionLimit = httpConnectionLimit
        self.httpIdleTimeout = httpIdleTimeout
        self.httpHeaderTimeout = httpHeaderTimeout
        self.httpBodyTimeout = httpBodyTimeout
        self.httpMinBodyBytesPerSecond = httpMinBodyBytesPerSecond
        self.shutdownGracePeriod = shutdownGracePeriod
        self.pruneInterval = pruneInterval
        self.pruneSliceSize = pruneSliceSize
        self.forwarding = forwarding
    }

    /// Every problem of these settings, with the config key it concerns: the checks
    /// `pulsegate serve` runs before it starts and `pulsegate validate` reports. The TLS files are
    /// read and checked too (readable, PEM, the key matches the certificate).
    package func problems() -> [ConfigurationProblem] {
        var problems: [ConfigurationProblem] = []
        func check(_ condition: Bool, _ path: String, _ message: String) {
            if !condition { problems.append(ConfigurationProblem(path, message)) }
        }
        check((0...65535).contains(listenPort), "listen", "port \(listenPort) is outside 0...65535")
        check(!dataDirectory.isEmpty, "dataDir", "must not be empty")
        check(maxBodyBytes > 0, "maxBodyBytes", "must be positive")
        check(requestMemoryBudgetBytes > 0, "requestMemoryBudgetBytes", "must be positive")
        check((1...64).contains(httpThreads), "httpThreads", "must be 1 to 64")
        check(pruneSliceSize > 0, "pruneSliceSize", "must be positive")
        check(httpHeaderTimeout > .zero, "httpHeaderTimeoutSeconds", "must be positive")
        check(httpBodyTimeout > .zero, "httpBodyTimeoutSeconds", "must be positive")
        check(httpMinBodyBytesPerSecond >= 0, "httpMinBodyBytesPerSecond", "must not be negative")
        check(
            Self.commitGatherMicrosecondsRange.contains(commitGatherMicroseconds), "commitGatherMicroseconds",
            "must be 0 to 10000")
        check(Self.commitGatherJobsRange.contains(commitGatherJobs), "commitGatherJobs", "must be 1 to 512")
        if let upstream {
            check((1...65535).contains(upstream.port), "upstream", "port \(upstream.port) is outside 1...65535")
        }
        if let problem = tls?.problem() { problems.append(problem) }
        problems += policy.problems()
        problems += forwarding.problems()
        return problems
    }
}

extension GatewayConfiguration {
    /// The group-commit gathering these settings ask for.
    var commitGathering: GroupGathering {
        GroupGathering(window: UInt64(max(0, commitGatherMicroseconds)) * 1_000, groupSize: commitGatherJobs)
    }
}

/// A `HOST:PORT` upstream address.
package struct UpstreamAddress: Sendable, Equatable, CustomStringConvertible {
    /// A host name or numeric address (IPv6 without brackets).
    package var host: String
    /// The TCP port.
    package var port: Int

    /// Creates an address.
    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, `[IPv6]:PORT` or `tcp://HOST:PORT`.
    package init(parsing text: String) throws(GatewayError) {
        guard let (host, port) = Self.split(text), (1...65535).contains(port) else {
            throw GatewayError(.invalidConfiguration, "upstream \"\(text)\" is not HOST:PORT with a port in 1...65535")
        }
        self.host = host
        self.port = port
    }

    /// Splits `HOST:PORT`, `[IPv6]:PORT` or `tcp://HOST:PORT`; `nil` when malformed.
    static func split(_ text: String) -> (String, Int)? {
        var rest = Substring(text)
        if rest.hasPrefix("tcp://") { rest = rest.dropFirst(6) }
        return try? HostPort.parse(rest, allowsUnbracketedIPv6: true)
    }

    package var description: String { HostPort.text(host: host, port: port) }
}

/// Intake settings that may change at run time (SIGHUP).
package struct GatewayPolicy: Sendable, Equatable, CheckedSettings {
    /// The App ID used when a request has no `Apsio-App-Id`; `nil` makes the header required.
    package var defaultAppID: String?
    /// When set, only these App IDs are accepted (others get 403).
    package var allowedAppIDs: Set<String>?
    /// How long a batch id is remembered per app, in milliseconds: 7 days by default and at least
    /// ``minimumDedupRetentionMilliseconds`` (the Apsio contract: at least the queue's maximum age).
    package var dedupRetentionMilliseconds: Int64
    /// The outbox cap in rows (Pulse batches); above it the intake answers 429.
    package var outboxMaxBatches: Int
    /// The outbox cap in payload bytes; above it the intake answers 429.
    package var outboxMaxBytes: Int
    /// The `Retry-After` seconds sent with 429 and 503.
    package var retryAfterSeconds: Int
    /// The least log level written (`debug`, `info`, `warning`, `error`).
    package var logLevel: LogLevel
    /// Bearer keys per app (config `appKeys`); requests for an app with keys need one (else 401).
    package var appKeys: AppKeys
    /// How long a missing batch sequence number may still arrive (out of order) before
    /// `GET /v1/diagnostics` reports it as a gap, in seconds (default 300; config key
    /// `diagnosticsGapGraceSeconds`).
    package var diagnosticsGapGraceSeconds: Int = 300
    /// Reverse proxies whose `X-Forwarded-For` names the client (config key `trustedProxies`);
    /// from any other peer the header is ignored. See ``TrustedProxies``.
    package var trustedProxies: TrustedProxies
    /// Per-app identity defaults and the choice between deriving and refusing an identity a resource
    /// does not carry (config key `appIdentity`; see ``AppIdentityPolicy``).
    package var appIdentity = AppIdentityPolicy()
    /// Per-app outbox shares and request rates (config key `appLimits`); see ``AppLimits``.
    package var appLimits = AppLimits()

    /// The accepted `dedupRetentionDays`: at least 7, because Apsio devices retry a batch for up
    /// to 7 days (the queue's maximum age) and each retry must still be recognised; at most 3,650.
    package static let dedupRetentionDays: ClosedRange<Int64> = 7...3_650
    /// The shortest accepted dedup retention, 7 days in milliseconds.
    package static let minimumDedupRetentionMilliseconds: Int64 = dedupRetentionDays.lowerBound * 86_400_000

    /// Why a `dedupRetentionDays` outside ``dedupRetentionDays`` is refused.
    static let dedupRetentionProblem =
        "dedupRetentionDays must be 7 to 3650: the Apsio contract requires remembering batch ids for at least "
        + "the queue's maximum age (7 days)"

    /// Creates a policy.
    package init(
        defaultAppID: String? = nil, allowedAppIDs: Set<String>? = nil,
        dedupRetentionMilliseconds: Int64 = 7 * 24 * 3600 * 1000, outboxMaxBatches: Int = 1_000_000,
        outboxMaxBytes: Int = 4 << 30, retryAfterSeconds: Int = 5, logLevel: LogLevel = .info,
        appKeys: AppKeys = AppKeys(),
        trustedProxies: TrustedProxies = .none
    ) {
        self.defaultAppID = defaultAppID
        self.allowedAppIDs = allowedAppIDs
        self.dedupRetentionMilliseconds = dedupRetentionMilliseconds
        self.outboxMaxBatches = outboxMaxBatches
        self.outboxMaxBytes = outboxMaxBytes
        self.retryAfterSeconds = retryAfterSeconds
        self.logLevel = logLevel
        self.appKeys = appKeys
        self.trustedProxies = trustedProxies
    }

    /// Every problem of the policy, with its config key, including the cross-field rules of
    /// ``appLimits`` (a share above the global cap, limits for an app that is not allowed, a burst
    /// without a rate).
    package func problems() -> [ConfigurationProblem] {
        var problems: [ConfigurationProblem] = []
        func check(_ condition: Bool, _ path: String, _ message: String) {
            if !condition { problems.append(ConfigurationProblem(path, message)) }
        }
        let identifier = "must be 1-128 characters of [A-Za-z0-9._~:-]"
        if let defaultAppID { check(IntakeHeaders.isValidIdentifier(defaultAppID), "defaultAppId", identifier) }
        for app in (allowedAppIDs ?? []).sorted() {
            check(IntakeHeaders.isValidIdentifier(app), "allowedAppIds", "entry \"\(app)\" \(identifier)")
        }
        if let defaultAppID, let allowedAppIDs {
            check(
                allowedAppIDs.contains(defaultAppID), "defaultAppId",
                "\(defaultAppID) is not in allowedAppIds, so requests without Apsio-App-Id would all get 403")
        }
        check(
            dedupRetentionMilliseconds >= Self.minimumDedupRetentionMilliseconds
                && dedupRetentionMilliseconds <= Self.dedupRetentionDays.upperBound * 86_400_000,
            "dedupRetentionDays", Self.dedupRetentionProblem)
        check(outboxMaxBatches > 0, "outboxMaxBatches", "must be positive")
        check(outboxMaxBytes > 0, "outboxMaxBytes", "must be positive")
        check(retryAfterSeconds >= 0, "retryAfterSeconds", "must not be negative")
        check(diagnosticsGapGraceSeconds >= 0, "diagnosticsGapGraceSeconds", "must not be negative")
        for app in appKeys.apps {
            if let allowedAppIDs {
                check(allowedAppIDs.contains(app), "appKeys.\(app)", "\(app) is not in allowedAppIds")
            }
        }
        var entries: [(String, AppLimits.Limit)] = [("appLimits.default", appLimits.default)]
        entries += appLimits.apps.keys.sorted().map { ("appLimits.apps.\($0)", appLimits.apps[$0]!) }
        for (path, limit) in entries {
            if let batches = limit.outboxBatches {
                check(batches > 0, path + ".outboxBatches", "must be positive")
                check(
                    batches <= outboxMaxBatches, path + ".outboxBatches",
                    "\(batches) is above outboxMaxBatches (\(outboxMaxBatches)); a share cannot exceed the whole outbox"
                )
            }
            if let bytes = limit.outboxBytes {
                check(bytes > 0, path + ".outboxBytes", "must be positive")
                check(
                    bytes <= outboxMaxBytes, path + ".outboxBytes",
                    "\(bytes) is above outboxMaxBytes (\(outboxMaxBytes)); a share cannot exceed the whole outbox")
            }
            if let rate = limit.requestsPerSecond {
                check(rate.isFinite && rate > 0, path + ".requestsPerSecond", "must be a positive number")
            }
            if let burst = limit.burst {
                check(burst > 0, path + ".burst", "must be positive")
            }
        }
        for (app, limit) in appLimits.apps.sorted(by: { $0.key < $1.key }) {
            let path = "appLimits.apps.\(app)"
            if let allowedAppIDs {
                check(allowedAppIDs.contains(app), path, "\(app) is not in allowedAppIds, so the entry never applies")
            }
            check(
                limit.burst == nil || limit.over(appLimits.default).requestsPerSecond != nil, path + ".burst",
                "is set without requestsPerSecond (here or in appLimits.default)")
        }
        check(
            appLimits.default.burst == nil || appLimits.default.requestsPerSecond != nil, "appLimits.default.burst",
            "is set without requestsPerSecond")
        return problems
    }
}

/// Upstream connections, in-flight bound and retry timing.
package struct ForwardingSettings: Sendable, Equatable, CheckedSettings {
    /// The most upstream connections the forwarder has open (or opening) at once: one per device
    /// identity; the least recently used idle one closes first, and a connect waits when every
    /// connection is busy. Default 1,024: size it above the working set of identities that have
    /// rows at once (`pulsegate_upstream_evictions_total` grows when it is below), at about 55 KiB
    /// of gateway memory per open connection.
    package var maxConnections: Int
    /// The most Pulse requests in flight across all identities.
    package var maxInFlight: Int
    /// An upstream connection unused this long is closed.
    package var idleTimeout: Duration
    /// The deadline of one upstream request.
    package var requestTimeout: Duration
    /// The deadline of a TCP connect plus CLIENT_CONNECT.
    package var connectTimeout: Duration
    /// The first retry delay cap; doubles per attempt (full jitter: the delay is uniform in 0...cap).
    package var backoffBase: Duration
    /// The largest retry delay cap.
    package var backoffMax: Duration
    /// How often the outbox is rescanned for rows not announced by the intake (requeued dead
    /// letters, rows left by an earlier run).
    package var rescanInterval: Duration
    /// The sliding window of the connect-attempt caps (TCP connect plus CLIENT_CONNECT). Default 10 min.
    package var connectWindow: Duration
    /// Connect attempts one identity may start within ``connectWindow``. Default 20 (the Pulse
    /// client's reconnect window).
    package var maxConnectsPerIdentity: Int
    /// Connect attempts all identities together may start within ``connectWindow``. Default 6,000.
    package var maxConnectsPerWindow: Int
    /// The most requests in flight on one identity's connection (the Pulse contract's
    /// per-connection bound; the SDK's default is 8): a sliding window, rows sent in FIFO order, each
    /// answer letting the next row go; see ``Forwarder`` for the ordering a consumer can rely on.
    /// 1 to 64 (``forwardWindowRange``), default 8.
    package var forwardWindow: Int

    /// The permitted ``forwardWindow`` values.
    package static let forwardWindowRange = 1...64

    /// Creates settings.
    package init(
        maxConnections: Int = 1_024, maxInFlight: Int = 64, idleTimeout: Duration = .seconds(120),
        requestTimeout: Duration = .seconds(15), connectTimeout: Duration = .seconds(10),
        backoffBase: Duration = .seconds(1), backoffMax: Duration = .seconds(300),
        rescanInterval: Duration = .seconds(30), connectWindow: Duration = .seconds(600),
        maxConnectsPerIdentity: Int = 20, maxConnectsPerWindow: Int = 6_000, forwardWindow: Int = 8
    ) {
        self.forwardWindow = forwardWindow
        self.connectWindow = connectWindow
        self.maxConnectsPerIdentity = maxConnectsPerIdentity
        self.maxConnectsPerWindow = maxConnectsPerWindow
        self.maxConnections = maxConnections
        self.maxInFlight = maxInFlight
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.backoffBase = backoffBase
        self.backoffMax = backoffMax
        self.rescanInterval = rescanInterval
    }

    /// Every problem of the forwarding settings, with its config key.
    package func problems() -> [ConfigurationProblem] {
        var problems: [ConfigurationProblem] = []
        func check(_ condition: Bool, _ path: String, _ message: String) {
            if !condition { problems.append(ConfigurationProblem("forwarding." + path, message)) }
        }
        check(maxConnections > 0, "maxConnections", "must be positive")
        check(maxInFlight > 0, "maxInFlight", "must be positive")
        check(idleTimeout > .zero, "idleTimeoutSeconds", "must be positive")
        check(requestTimeout > .zero, "requestTimeoutSeconds", "must be positive")
        check(backoffBase > .zero, "backoffBaseMs", "must be positive")
        check(backoffMax >= backoffBase, "backoffMaxMs", "must be at least backoffBaseMs")
        check(Self.forwardWindowRange.contains(forwardWindow), "forwardWindow", "must be 1 to 64")
        check(connectWindow > .zero, "connectWindowSeconds", "must be positive")
        check(maxConnectsPerIdentity > 0, "maxConnectsPerIdentity", "must be positive")
        check(maxConnectsPerWindow > 0, "maxConnectsPerWindow", "must be positive")
        return problems
    }
}
