import PulseHTTP
import PulseJSON

/// The `--config FILE` format: one JSON object, every key optional.
///
/// ```json
/// {
///   "listen": "127.0.0.1:4318",
///   "upstream": "127.0.0.1:6000",
///   "dataDir": "/var/lib/pulsegate",
///   "store": "postgres://pulsegate@db.internal/pulsegate",
///   "storeLeaseMs": 10000,
///   "defaultAppId": "shop",
///   "allowedAppIds": ["shop", "news"],
///   "appKeys": {"shop": ["key-1", "key-2"]},
///   "dedupRetentionDays": 7,
///   "outboxMaxBatches": 1000000,
///   "outboxMaxBytes": 4294967296,
///   "retryAfterSeconds": 5,
///   "diagnosticsGapGraceSeconds": 300,
///   "logLevel": "info",
///   "trustedProxies": ["127.0.0.1", "10.0.0.0/8", "::1"],
///   "maxBodyBytes": 16777216,
///   "requestMemoryBudgetBytes": 536870912,
///   "httpThreads": 2,
///   "commitGatherMicroseconds": 300,
///   "commitGatherJobs": 32,
///   "forwarding": {"maxConnections": 256, "maxInFlight": 64, "idleTimeoutSeconds": 120,
///                  "requestTimeoutSeconds": 15, "backoffBaseMs": 1000, "backoffMaxMs": 300000,
///                  "connectWindowSeconds": 600, "maxConnectsPerIdentity": 20, "maxConnectsPerWindow": 6000,
///                  "forwardWindow": 8, "rescanIntervalMs": 30000}
/// }
/// ```
///
/// Unknown keys are an error (a typo should not pass silently). `dedupRetentionDays` must be 7 to
/// 3,650 (the Apsio contract: batch ids are remembered for at least the queue's maximum age). Flags and environment variables
/// override `listen`, `upstream` and `dataDir`. On SIGHUP the file is read again and the policy
/// keys (`defaultAppId`, `allowedAppIds`, `appKeys`, `dedupRetentionDays`, `outboxMax*`,
/// `retryAfterSeconds`, `logLevel`, `diagnosticsGapGraceSeconds`, `trustedProxies`) take effect; the others
/// need a restart.
public struct ConfigurationFile: Sendable, Equatable {
    /// `listen`: `HOST:PORT`.
    public var listen: String?
    /// `upstream`: `HOST:PORT`.
    public var upstream: String?
    /// `dataDir`.
    public var dataDirectory: String?
    /// `store`: a PostgreSQL connection string (fleet mode); absent for SQLite in `dataDir`.
    public var store: String?
    var storeLeaseMilliseconds: Int?
    var rescanIntervalMilliseconds: Int?
    var defaultAppID: String?
    var allowedAppIDs: [String]?
    var appKeys: AppKeys?
    var dedupRetentionDays: Int64?
    var outboxMaxBatches: Int?
    var outboxMaxBytes: Int?
    var retryAfterSeconds: Int?
    var logLevel: LogLevel?
    var diagnosticsGapGraceSeconds: Int?
    var trustedProxies: TrustedProxies?
    var maxBodyBytes: Int?
    var requestMemoryBudgetBytes: Int?
    var httpThreads: Int?
    var httpHeaderTimeoutSeconds: Int?
    var httpBodyTimeoutSeconds: Int?
    var httpMinBodyBytesPerSecond: Int?
    var commitGatherMicroseconds: Int?
    var commitGatherJobs: Int?
    var maxConnections: Int?
    var maxInFlight: Int?
    var idleTimeoutSeconds: Int?
    var requestTimeoutSeconds: Int?
    var backoffBaseMilliseconds: Int?
    var backoffMaxMilliseconds: Int?
    var connectWindowSeconds: Int?
    var maxConnectsPerIdentity: Int?
    var forwardWindow: Int?
    var maxConnectsPerWindow: Int?

    /// An empty file (nothing set).
    public init() {}

    /// Parses the file's bytes.
    ///
    /// - Throws: ``GatewayError`` with `invalidConfiguration` naming the key.
    public init(parsing bytes: [UInt8]) throws(GatewayError) {
        let root: JSONNode
        do {
            root = try JSONParser(maxDepth: 8, maxBytes: 1 << 20).parse(bytes).root
        } catch {
            throw GatewayError(.invalidConfiguration, "the config file is not valid JSON", underlying: error)
        }
        guard root.kind == .object else {
            throw GatewayError(.invalidConfiguration, "the config file must be a JSON object")
        }
        func fail(_ key: String, _ expected: String) -> GatewayError {
            GatewayError(.invalidConfiguration, "config key \"\(key)\" must be \(expected)")
        }
        func string(_ key: String, _ node: JSONNode) throws(GatewayError) -> String {
            guard let value = node.string else { throw fail(key, "a string") }
            return value
        }
        func integer(_ key: String, _ node: JSONNode) throws(GatewayError) -> Int {
            guard let value = node.int64, let fitted = Int(exactly: value) else { throw fail(key, "an integer") }
            return fitted
        }
        for (key, value) in root.members {
            switch key {
            case "listen": listen = try string(key, value)
            case "upstream": upstream = try string(key, value)
            case "dataDir": dataDirectory = try string(key, value)
            case "store": store = try string(key, value)
            case "storeLeaseMs":
                let milliseconds = try integer(key, value)
                guard (500...600_000).contains(milliseconds) else { throw fail(key, "500 to 600000") }
                storeLeaseMilliseconds = milliseconds
            case "defaultAppId": defaultAppID = try string(key, value)
            case "allowedAppIds":
                guard value.kind == .array else { throw fail(key, "an array of strings") }
                var apps: [String] = []
                for element in value.elements { apps.append(try string(key, element)) }
                allowedAppIDs = apps
            case "appKeys":
                guard value.kind == .object else { throw fail(key, "an object of App ID to an array of keys") }
                var keys: [String: [String]] = [:]
                for (app, list) in value.members {
                    guard list.kind == .array else { throw fail(key, "an object of App ID to an array of keys") }
                    var appKeys: [String] = []
                    for element in list.elements {
                        guard let text = element.string else {
                            throw fail(key, "an object of App ID to an array of keys")
                        }
                        appKeys.append(text)
                    }
                    keys[app] = appKeys
                }
                appKeys = try AppKeys(keys)
            case "dedupRetentionDays":
                let days = Int64(try integer(key, value))
                guard GatewayPolicy.dedupRetentionDays.contains(days) else {
                    throw GatewayError(.invalidConfiguration, GatewayPolicy.dedupRetentionProblem)
                }
                dedupRetentionDays = days
            case "outboxMaxBatches": outboxMaxBatches = try integer(key, value)
            case "outboxMaxBytes": outboxMaxBytes = try integer(key, value)
            case "retryAfterSeconds": retryAfterSeconds = try integer(key, value)
            case "diagnosticsGapGraceSeconds": diagnosticsGapGraceSeconds = try integer(key, value)
            case "logLevel":
                guard let level = LogLevel(rawValue: try string(key, value)) else {
                    throw fail(key, "one of debug, info, warning, error")
                }
                logLevel = level
            case "trustedProxies":
                guard value.kind == .array else { throw fail(key, "an array of IP addresses and CIDR blocks") }
                var entries: [String] = []
                for element in value.elements { entries.append(try string(key, element)) }
                do {
                    trustedProxies = try TrustedProxies(entries)
                } catch {
                    throw GatewayError(.invalidConfiguration, "config key \"\(key)\": \(error.message)")
                }
            case "maxBodyBytes": maxBodyBytes = try integer(key, value)
            case "requestMemoryBudgetBytes": requestMemoryBudgetBytes = try integer(key, value)
            case "httpThreads": httpThreads = try integer(key, value)
            case "httpHeaderTimeoutSeconds": httpHeaderTimeoutSeconds = try integer(key, value)
            case "httpBodyTimeoutSeconds": httpBodyTimeoutSeconds = try integer(key, value)
            case "httpMinBodyBytesPerSecond": httpMinBodyBytesPerSecond = try integer(key, value)
            case "commitGatherMicroseconds": commitGatherMicroseconds = try integer(key, value)
            case "commitGatherJobs": commitGatherJobs = try integer(key, value)
            case "forwarding":
                guard value.kind == .object else { throw fail(key, "an object") }
                for (inner, setting) in value.members {
                    let name = "forwarding." + inner
                    switch inner {
                    case "maxConnections": maxConnections = try integer(name, setting)
                    case "maxInFlight": maxInFlight = try integer(name, setting)
                    case "idleTimeoutSeconds": idleTimeoutSeconds = try integer(name, setting)
                    case "requestTimeoutSeconds": requestTimeoutSeconds = try integer(name, setting)
                    case "backoffBaseMs": backoffBaseMilliseconds = try integer(name, setting)
                    case "backoffMaxMs": backoffMaxMilliseconds = try integer(name, setting)
                    case "connectWindowSeconds": connectWindowSeconds = try integer(name, setting)
                    case "maxConnectsPerIdentity": maxConnectsPerIdentity = try integer(name, setting)
                    case "maxConnectsPerWindow": maxConnectsPerWindow = try integer(name, setting)
                    case "forwardWindow": forwardWindow = try integer(name, setting)
                    case "rescanIntervalMs":
                        let milliseconds = try integer(name, setting)
                        guard milliseconds >= 100 else { throw fail(name, "at least 100") }
                        rescanIntervalMilliseconds = milliseconds
                    default: throw GatewayError(.invalidConfiguration, "unknown config key \"\(name)\"")
                    }
                }
            default:
                throw GatewayError(.invalidConfiguration, "unknown config key \"\(key)\"")
            }
        }
    }

    /// The run-time policy this file sets, starting from `base`.
    public func policy(from base: GatewayPolicy = GatewayPolicy()) -> GatewayPolicy {
        var policy = base
        if let defaultAppID { policy.defaultAppID = defaultAppID }
        if let allowedAppIDs { policy.allowedAppIDs = Set(allowedAppIDs) }
        if let appKeys { policy.appKeys = appKeys }
        if let dedupRetentionDays { policy.dedupRetentionMilliseconds = dedupRetentionDays * 24 * 3600 * 1000 }
        if let outboxMaxBatches { policy.outboxMaxBatches = outboxMaxBatches }
        if let outboxMaxBytes { policy.outboxMaxBytes = outboxMaxBytes }
        if let retryAfterSeconds { policy.retryAfterSeconds = retryAfterSeconds }
        if let logLevel { policy.logLevel = logLevel }
        if let diagnosticsGapGraceSeconds { policy.diagnosticsGapGraceSeconds = diagnosticsGapGraceSeconds }
        if let trustedProxies { policy.trustedProxies = trustedProxies }
        return policy
    }

    /// Applies every setting of the file except `listen`, `upstream` and `dataDir` (the caller
    /// resolves those with flags and environment first).
    public func apply(to configuration: inout GatewayConfiguration) {
        configuration.policy = policy(from: configuration.policy)
        if let maxBodyBytes { configuration.maxBodyBytes = maxBodyBytes }
        if let requestMemoryBudgetBytes { configuration.requestMemoryBudgetBytes = requestMemoryBudgetBytes }
        if let httpThreads { configuration.httpThreads = httpThreads }
        if let httpHeaderTimeoutSeconds { configuration.httpHeaderTimeout = .seconds(httpHeaderTimeoutSeconds) }
        if let httpBodyTimeoutSeconds { configuration.httpBodyTimeout = .seconds(httpBodyTimeoutSeconds) }
        if let httpMinBodyBytesPerSecond { configuration.httpMinBodyBytesPerSecond = httpMinBodyBytesPerSecond }
        if let commitGatherMicroseconds { configuration.commitGatherMicroseconds = commitGatherMicroseconds }
        if let commitGatherJobs { configuration.commitGatherJobs = commitGatherJobs }
        if let maxConnections { configuration.forwarding.maxConnections = maxConnections }
        if let maxInFlight { configuration.forwarding.maxInFlight = maxInFlight }
        if let idleTimeoutSeconds { configuration.forwarding.idleTimeout = .seconds(idleTimeoutSeconds) }
        if let requestTimeoutSeconds { configuration.forwarding.requestTimeout = .seconds(requestTimeoutSeconds) }
        if let backoffBaseMilliseconds { configuration.forwarding.backoffBase = .milliseconds(backoffBaseMilliseconds) }
        if let backoffMaxMilliseconds { configuration.forwarding.backoffMax = .milliseconds(backoffMaxMilliseconds) }
        if let connectWindowSeconds { configuration.forwarding.connectWindow = .seconds(connectWindowSeconds) }
        if let maxConnectsPerIdentity { configuration.forwarding.maxConnectsPerIdentity = maxConnectsPerIdentity }
        if let maxConnectsPerWindow { configuration.forwarding.maxConnectsPerWindow = maxConnectsPerWindow }
        if let forwardWindow { configuration.forwarding.forwardWindow = forwardWindow }
        if let storeLeaseMilliseconds { configuration.storeLease = .milliseconds(storeLeaseMilliseconds) }
        if let rescanIntervalMilliseconds {
            configuration.forwarding.rescanInterval = .milliseconds(rescanIntervalMilliseconds)
        }
    }
}

extension GatewayConfiguration {
    /// Parses a `--listen` value (`HOST:PORT`, `[IPv6]:PORT`, or a bare `PORT` on 127.0.0.1) into
    /// host and port; port 0 picks a free port.
    public static func parseListen(_ text: String) throws(GatewayError) -> (host: String, port: Int) {
        if let port = Int(text), (0...65535).contains(port) { return ("127.0.0.1", port) }
        guard let (host, port) = UpstreamAddress.split(text) else {
            throw GatewayError(.invalidConfiguration, "listen address \"\(text)\" is not HOST:PORT")
        }
        return (host, port)
    }
}
