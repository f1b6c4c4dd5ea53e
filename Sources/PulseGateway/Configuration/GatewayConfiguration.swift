import PulseHTTP
import PulseStorage

/// Everything the gateway needs to run. Built by `pulsegate serve` from flags, environment and
/// the config file (see ``ConfigurationFile``); tests build it directly.
public struct GatewayConfiguration: Sendable {
    /// Where the HTTP intake listens: a numeric host (`127.0.0.1`, `::1`, `0.0.0.0`) and a port; 0
    /// picks a free port.
    public var listenHost: String
    /// The HTTP port; 0 picks a free port (see ``RunningGateway/httpPort``).
    public var listenPort: Int
    /// The upstream Pulse server (`host`, `port`), or `nil` to start the reference ingest server
    /// in-process on loopback.
    public var upstream: UpstreamAddress?
    /// The directory holding `gateway.sqlite` (and the embedded ingest server's data).
    public var dataDirectory: String
    /// Settings that can change while running (SIGHUP reloads them from the config file).
    public var policy: GatewayPolicy
    /// Where the dedup table, outbox and dead letters live: `nil` for SQLite in ``dataDirectory``
    /// (the embedded default), or a PostgreSQL connection string (`postgres://…` or libpq
    /// `key=value` pairs) shared by a fleet of gateways (`--store`, `PULSEGATE_STORE`, config
    /// key `store`; docs/fleet.md).
    public var store: String?
    /// Fleet mode: how long an identity's forwarding lease lasts without renewal; a dead node's
    /// identities are taken over after at most this plus ``ForwardingSettings/rescanInterval``
    /// (config key `storeLeaseMs`, default 10 s).
    public var storeLease: Duration = .seconds(10)
    /// The largest decoded request body, in bytes (413 above it).
    public var maxBodyBytes: Int
    /// The memory, in bytes, that requests in flight may reserve together (default 512 MiB): their
    /// buffered wire bodies plus the estimated working set of decoding, parsing and mapping them
    /// (``GatewayIntake/workingSet(format:decodedBytes:)``). A request that does not fit waits up to
    /// a second, then gets 503 with `Retry-After`.
    public var requestMemoryBudgetBytes: Int
    /// libmicrohttpd event-loop threads.
    public var httpThreads: Int
    /// The most HTTP connections at once.
    public var httpConnectionLimit: Int
    /// How long an HTTP connection may make no progress before it is closed.
    public var httpIdleTimeout: Duration
    /// How long a request's line and headers may take to arrive (slowloris protection; see
    /// `HTTPServerConfiguration.headerTimeout`). Config key `httpHeaderTimeoutSeconds`.
    public var httpHeaderTimeout: Duration
    /// How long a request body may take before ``httpMinBodyBytesPerSecond`` extends it. Config key
    /// `httpBodyTimeoutSeconds`.
    public var httpBodyTimeout: Duration
    /// Every this many body bytes received extend ``httpBodyTimeout`` by one second (the minimum
    /// average upload rate). Config key `httpMinBodyBytesPerSecond`.
    public var httpMinBodyBytesPerSecond: Int
    /// How long SIGTERM waits for in-flight requests.
    public var shutdownGracePeriod: Duration
    /// How often expired dedup keys are pruned, and how many per slice.
    public var pruneInterval: Duration
    /// Expired dedup rows deleted per pruning transaction.
    public var pruneSliceSize: Int
    /// Upstream connection and retry settings.
    public var forwarding: ForwardingSettings
    /// How long, in microseconds, an intake commit may wait for other requests to share its fsync
    /// (default 0: off; at most ``commitGatherMicrosecondsRange``'s upper bound). It waits only when
    /// requests are arriving closer together than this, so a lone request is not delayed. Off by
    /// default because on the disks measured so far it raised jobs per fsync but lowered requests
    /// per second (docs/operations.md). Config key `commitGatherMicroseconds`.
    public var commitGatherMicroseconds: Int
    /// The gathering ends as soon as this many requests are queued for the commit (default 32, at
    /// most 512, the group-commit batch limit). Config key `commitGatherJobs`.
    public var commitGatherJobs: Int

    /// The accepted ``commitGatherMicroseconds``: up to 10 ms.
    public static let commitGatherMicrosecondsRange = 0...10_000
    /// The accepted ``commitGatherJobs``.
    public static let commitGatherJobsRange = 1...512

    /// Creates a configuration with defaults for everything but the data directory.
    public init(
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

    /// Checks the values, throwing ``GatewayError/Code/invalidConfiguration`` for the first bad one.
    public func validate() throws(GatewayError) {
        func fail(_ message: String) -> GatewayError { GatewayError(.invalidConfiguration, message) }
        guard (0...65535).contains(listenPort) else { throw fail("listen port \(listenPort) is outside 0...65535") }
        guard !dataDirectory.isEmpty else { throw fail("the data directory must not be empty") }
        guard maxBodyBytes > 0 else { throw fail("maxBodyBytes must be positive") }
        guard requestMemoryBudgetBytes > 0 else { throw fail("requestMemoryBudgetBytes must be positive") }
        guard pruneSliceSize > 0 else { throw fail("pruneSliceSize must be positive") }
        guard httpHeaderTimeout > .zero else { throw fail("httpHeaderTimeoutSeconds must be positive") }
        guard httpBodyTimeout > .zero else { throw fail("httpBodyTimeoutSeconds must be positive") }
        guard httpMinBodyBytesPerSecond >= 0 else { throw fail("httpMinBodyBytesPerSecond must not be negative") }
        guard Self.commitGatherMicrosecondsRange.contains(commitGatherMicroseconds) else {
            throw fail("commitGatherMicroseconds must be 0 to 10000")
        }
        guard Self.commitGatherJobsRange.contains(commitGatherJobs) else {
            throw fail("commitGatherJobs must be 1 to 512")
        }
        if let upstream, !(1...65535).contains(upstream.port) {
            throw fail("upstream port \(upstream.port) is outside 1...65535")
        }
        try policy.validate()
        try forwarding.validate()
    }
}

extension GatewayConfiguration {
    /// The group-commit gathering these settings ask for.
    var commitGathering: GroupGathering {
        GroupGathering(window: UInt64(max(0, commitGatherMicroseconds)) * 1_000, groupSize: commitGatherJobs)
    }
}

/// A `HOST:PORT` upstream address.
public struct UpstreamAddress: Sendable, Equatable, CustomStringConvertible {
    /// A host name or numeric address (IPv6 without brackets).
    public var host: String
    /// The TCP port.
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, `[IPv6]:PORT` or `tcp://HOST:PORT`.
    public init(parsing text: String) throws(GatewayError) {
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
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            portText = rest[rest.index(close, offsetBy: 2)...]
        } else {
            guard let colon = rest.lastIndex(of: ":") else { return nil }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else { return nil }
        return (String(host), port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Intake settings that may change at run time (SIGHUP).
public struct GatewayPolicy: Sendable, Equatable {
    /// The App ID used when a request has no `Apsio-App-Id`; `nil` makes the header required.
    public var defaultAppID: String?
    /// When set, only these App IDs are accepted (others get 403).
    public var allowedAppIDs: Set<String>?
    /// How long a batch id is remembered per app, in milliseconds: 7 days by default and at least
    /// ``minimumDedupRetentionMilliseconds`` (the Apsio contract: at least the queue's maximum age).
    public var dedupRetentionMilliseconds: Int64
    /// The outbox cap in rows (Pulse batches); above it the intake answers 429.
    public var outboxMaxBatches: Int
    /// The outbox cap in payload bytes; above it the intake answers 429.
    public var outboxMaxBytes: Int
    /// The `Retry-After` seconds sent with 429 and 503.
    public var retryAfterSeconds: Int
    /// The least log level written (`debug`, `info`, `warning`, `error`).
    public var logLevel: LogLevel
    /// Bearer keys per app (config `appKeys`); requests for an app with keys need one (else 401).
    public var appKeys: AppKeys
    /// How long a missing batch sequence number may still arrive (out of order) before
    /// `GET /v1/diagnostics` reports it as a gap, in seconds (default 300; config key
    /// `diagnosticsGapGraceSeconds`).
    public var diagnosticsGapGraceSeconds: Int = 300
    /// Reverse proxies whose `X-Forwarded-For` names the client (config key `trustedProxies`);
    /// from any other peer the header is ignored. See ``TrustedProxies``.
    public var trustedProxies: TrustedProxies

    /// The accepted `dedupRetentionDays`: at least 7, because Apsio devices retry a batch for up
    /// to 7 days (the queue's maximum age) and each retry must still be recognised; at most 3,650.
    public static let dedupRetentionDays: ClosedRange<Int64> = 7...3_650
    /// The shortest accepted dedup retention, 7 days in milliseconds.
    public static let minimumDedupRetentionMilliseconds: Int64 = dedupRetentionDays.lowerBound * 86_400_000

    /// Why a `dedupRetentionDays` outside ``dedupRetentionDays`` is refused.
    static let dedupRetentionProblem =
        "dedupRetentionDays must be 7 to 3650: the Apsio contract requires remembering batch ids for at least "
        + "the queue's maximum age (7 days)"

    /// Creates a policy.
    public init(
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

    func validate() throws(GatewayError) {
        func fail(_ message: String) -> GatewayError { GatewayError(.invalidConfiguration, message) }
        if let defaultAppID, !IntakeHeaders.isValidIdentifier(defaultAppID) {
            throw fail("defaultAppId must be 1-128 characters of [A-Za-z0-9._~:-]")
        }
        for app in allowedAppIDs ?? [] where !IntakeHeaders.isValidIdentifier(app) {
            throw fail("allowedAppIds entries must be 1-128 characters of [A-Za-z0-9._~:-]")
        }
        guard
            dedupRetentionMilliseconds >= Self.minimumDedupRetentionMilliseconds,
            dedupRetentionMilliseconds <= Self.dedupRetentionDays.upperBound * 86_400_000
        else { throw fail(Self.dedupRetentionProblem) }
        guard outboxMaxBatches > 0, outboxMaxBytes > 0 else { throw fail("the outbox caps must be positive") }
        guard retryAfterSeconds >= 0 else { throw fail("retryAfterSeconds must not be negative") }
        guard diagnosticsGapGraceSeconds >= 0 else { throw fail("diagnosticsGapGraceSeconds must not be negative") }
    }
}

/// Upstream connections, in-flight bound and retry timing.
public struct ForwardingSettings: Sendable, Equatable {
    /// The most upstream connections the forwarder has open (or opening) at once: one per device
    /// identity; the least recently used idle one closes first, and a connect waits when every
    /// connection is busy. Default 256.
    public var maxConnections: Int
    /// The most Pulse requests in flight across all identities.
    public var maxInFlight: Int
    /// An upstream connection unused this long is closed.
    public var idleTimeout: Duration
    /// The deadline of one upstream request.
    public var requestTimeout: Duration
    /// The deadline of a TCP connect plus CLIENT_CONNECT.
    public var connectTimeout: Duration
    /// The first retry delay cap; doubles per attempt (full jitter: the delay is uniform in 0...cap).
    public var backoffBase: Duration
    /// The largest retry delay cap.
    public var backoffMax: Duration
    /// How often the outbox is rescanned for rows not announced by the intake (requeued dead
    /// letters, rows left by an earlier run).
    public var rescanInterval: Duration
    /// The sliding window of the connect-attempt caps (TCP connect plus CLIENT_CONNECT). Default 10 min.
    public var connectWindow: Duration
    /// Connect attempts one identity may start within ``connectWindow``. Default 20 (the Pulse
    /// client's reconnect window).
    public var maxConnectsPerIdentity: Int
    /// Connect attempts all identities together may start within ``connectWindow``. Default 6,000.
    public var maxConnectsPerWindow: Int
    /// The most requests in flight on one identity's connection (the Pulse contract's
    /// per-connection bound; the SDK's default is 8). Rows are read as one read of the next
    /// `forwardWindow` rows and sent in FIFO order; see ``Forwarder`` for the ordering a consumer
    /// can rely on. 1 to 64 (``forwardWindowRange``), default 8.
    public var forwardWindow: Int

    /// The permitted ``forwardWindow`` values.
    public static let forwardWindowRange = 1...64

    /// Creates settings.
    public init(
        maxConnections: Int = 256, maxInFlight: Int = 64, idleTimeout: Duration = .seconds(120),
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

    func validate() throws(GatewayError) {
        func fail(_ message: String) -> GatewayError { GatewayError(.invalidConfiguration, message) }
        guard maxConnections > 0, maxInFlight > 0 else { throw fail("maxConnections and maxInFlight must be positive") }
        guard backoffBase > .zero, backoffMax >= backoffBase else {
            throw fail("backoff must be positive with backoffMax >= backoffBase")
        }
        guard Self.forwardWindowRange.contains(forwardWindow) else {
            throw fail("forwardWindow must be 1 to 64")
        }
        guard connectWindow > .zero, maxConnectsPerIdentity > 0, maxConnectsPerWindow > 0 else {
            throw fail("connectWindowSeconds, maxConnectsPerIdentity and maxConnectsPerWindow must be positive")
        }
    }
}
