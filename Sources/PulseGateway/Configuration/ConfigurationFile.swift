import PulseHTTP
package import PulseJSON
import PulseKit

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
///   "appIdentity": {"default": {"missingIdentity": "derive"},
///                   "apps": {"shop": {"missingIdentity": "refuse", "platform": "android"}}},
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
///   "forwarding": {"maxConnections": 1024, "maxInFlight": 64, "idleTimeoutSeconds": 120,
///                  "requestTimeoutSeconds": 15, "backoffBaseMs": 1000, "backoffMaxMs": 300000,
///                  "connectWindowSeconds": 600, "maxConnectsPerIdentity": 20, "maxConnectsPerWindow": 6000,
///                  "forwardWindow": 8, "rescanIntervalMs": 30000},
///   "tlsCert": "/etc/pulsegate/tls/cert.pem",
///   "tlsKey": "/etc/pulsegate/tls/key.pem",
///   "appLimits": {"default": {"outboxBatches": 100000},
///                 "apps": {"shop": {"outboxBytes": 1073741824, "requestsPerSecond": 50, "burst": 100}}}
/// }
/// ```
///
/// Unknown keys are an error (a typo should not pass silently), and every problem is reported
/// with its key path (``check(_:)``), not only the first. `dedupRetentionDays` must be 7 to
/// 3,650 (the Apsio contract: batch ids are remembered for at least the queue's maximum age). Flags and environment variables
/// override `listen`, `upstream` and `dataDir`. On SIGHUP the file is read again and the policy
/// keys (`defaultAppId`, `allowedAppIds`, `appKeys`, `appIdentity`, `dedupRetentionDays`, `outboxMax*`,
/// `retryAfterSeconds`, `logLevel`, `diagnosticsGapGraceSeconds`, `trustedProxies`, `appLimits`) take
/// effect, and the TLS certificate and key files (`tlsCert`, `tlsKey`, or the flags) are read again;
/// the others need a restart.
package struct ConfigurationFile: Sendable, Equatable {
    /// `listen`: `HOST:PORT`.
    package var listen: String?
    /// `upstream`: `HOST:PORT`.
    package var upstream: String?
    /// `dataDir`.
    package var dataDirectory: String?
    /// `store`: a PostgreSQL connection string (fleet mode); absent for SQLite in `dataDir`.
    package var store: String?
    var storeLeaseMilliseconds: Int?
    var rescanIntervalMilliseconds: Int?
    var defaultAppID: String?
    var allowedAppIDs: [String]?
    var appKeys: AppKeys?
    var appIdentity: AppIdentityPolicy?
    var dedupRetentionDays: Int64?
    var outboxMaxBatches: Int?
    var outboxMaxBytes: Int?
    var retryAfterSeconds: Int?
    var logLevel: LogLevel?
    var diagnosticsGapGraceSeconds: Int?
    var trustedProxies: TrustedProxies?
    var appLimits: AppLimits?
    /// `tlsCert`: the PEM certificate chain the HTTP intake serves (with `tlsKey`).
    package var tlsCertificatePath: String?
    /// `tlsKey`: the PEM private key of `tlsCert` (unencrypted).
    package var tlsKeyPath: String?
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
    package init() {}

    /// Parses the file's bytes.
    ///
    /// - Throws: ``GatewayError`` with `invalidConfiguration` listing every problem
    ///   (``check(_:)``) with its key path.
    package init(parsing bytes: [UInt8]) throws(GatewayError) {
        let (file, problems) = Self.check(bytes)
        guard problems.isEmpty else { throw GatewayError.invalidConfiguration(problems) }
        self = file
    }

    /// Parses the file's bytes and checks every value, collecting every problem (the values that
    /// are valid are set in the returned file, the others left unset). The one parser behind
    /// `pulsegate serve`, its SIGHUP reload and `pulsegate validate`.
    package static func check(_ bytes: [UInt8]) -> (ConfigurationFile, [ConfigurationProblem]) {
        var file = ConfigurationFile()
        var problems: [ConfigurationProblem] = []
        let root: JSONNode
        do {
            root = try JSONParser(maxDepth: 8, maxBytes: 1 << 20).parse(bytes).root
        } catch {
            return (file, [ConfigurationProblem("", "the config file is not valid JSON (\(error.message))")])
        }
        guard root.kind == .object else {
            return (file, [ConfigurationProblem("", "the config file must be a JSON object")])
        }
        var reader = ConfigurationReader()
        for (key, value) in root.members {
            file.read(key, value, &reader)
        }
        problems = reader.problems
        return (file, problems)
    }

    private mutating func read(_ key: String, _ value: JSONNode, _ reader: inout ConfigurationReader) {
        switch key {
        case "listen": listen = reader.string(key, value)
        case "upstream": upstream = reader.string(key, value)
        case "dataDir": dataDirectory = reader.string(key, value)
        case "store": store = reader.string(key, value)
        case "storeLeaseMs": storeLeaseMilliseconds = reader.integer(key, value, 500...600_000)
        case "tlsCert": tlsCertificatePath = reader.string(key, value)
        case "tlsKey": tlsKeyPath = reader.string(key, value)
        case "defaultAppId": defaultAppID = reader.string(key, value)
        case "allowedAppIds": allowedAppIDs = reader.strings(key, value, "an array of strings")
        case "appKeys": readAppKeys(value, &reader)
        case "appLimits": appLimits = AppLimits(reading: value, &reader)
        case "appIdentity": appIdentity = AppIdentityPolicy(reading: value, &reader)
        case "dedupRetentionDays":
            guard let days = reader.integer(key, value) else { return }
            guard GatewayPolicy.dedupRetentionDays.contains(Int64(days)) else {
                return reader.fail(key, GatewayPolicy.dedupRetentionProblem)
            }
            dedupRetentionDays = Int64(days)
        case "logLevel":
            guard let text = reader.string(key, value) else { return }
            guard let level = LogLevel(rawValue: text) else {
                return reader.fail(key, "must be one of debug, info, warning, error")
            }
            logLevel = level
        case "trustedProxies":
            guard let entries = reader.strings(key, value, "an array of IP addresses and CIDR blocks") else { return }
            do {
                trustedProxies = try TrustedProxies(entries)
            } catch {
                reader.fail(key, error.message)
            }
        case "forwarding":
            guard reader.object(key, value) else { return }
            for (inner, setting) in value.members {
                let name = "forwarding." + inner
                if inner == "rescanIntervalMs" {
                    rescanIntervalMilliseconds = reader.integer(name, setting, 100...Int.max)
                } else {
                    readInteger(name, setting, &reader)
                }
            }
        default:
            // The table names nested keys by their path: a top-level key with a dot is unknown.
            if key.contains(".") { return reader.fail(key, "unknown config key") }
            readInteger(key, value, &reader)
        }
    }

    /// The integer settings read with no range of their own (the policy and configuration checks
    /// judge their values), by key path in the file.
    private static let integerSettings: [String: any WritableKeyPath<ConfigurationFile, Int?> & Sendable] = [
        "outboxMaxBatches": \.outboxMaxBatches,
        "outboxMaxBytes": \.outboxMaxBytes,
        "retryAfterSeconds": \.retryAfterSeconds,
        "diagnosticsGapGraceSeconds": \.diagnosticsGapGraceSeconds,
        "maxBodyBytes": \.maxBodyBytes,
        "requestMemoryBudgetBytes": \.requestMemoryBudgetBytes,
        "httpThreads": \.httpThreads,
        "httpHeaderTimeoutSeconds": \.httpHeaderTimeoutSeconds,
        "httpBodyTimeoutSeconds": \.httpBodyTimeoutSeconds,
        "httpMinBodyBytesPerSecond": \.httpMinBodyBytesPerSecond,
        "commitGatherMicroseconds": \.commitGatherMicroseconds,
        "commitGatherJobs": \.commitGatherJobs,
        "forwarding.maxConnections": \.maxConnections,
        "forwarding.maxInFlight": \.maxInFlight,
        "forwarding.idleTimeoutSeconds": \.idleTimeoutSeconds,
        "forwarding.requestTimeoutSeconds": \.requestTimeoutSeconds,
        "forwarding.backoffBaseMs": \.backoffBaseMilliseconds,
        "forwarding.backoffMaxMs": \.backoffMaxMilliseconds,
        "forwarding.connectWindowSeconds": \.connectWindowSeconds,
        "forwarding.maxConnectsPerIdentity": \.maxConnectsPerIdentity,
        "forwarding.maxConnectsPerWindow": \.maxConnectsPerWindow,
        "forwarding.forwardWindow": \.forwardWindow,
    ]

    /// Reads the integer setting at key path `path` (``integerSettings``), or fails an unknown key.
    private mutating func readInteger(_ path: String, _ value: JSONNode, _ reader: inout ConfigurationReader) {
        guard let setting = Self.integerSettings[path] else { return reader.fail(path, "unknown config key") }
        self[keyPath: setting] = reader.integer(path, value)
    }

    private mutating func readAppKeys(_ value: JSONNode, _ reader: inout ConfigurationReader) {
        let expected = "an object of App ID to an array of keys"
        guard value.kind == .object else { return reader.fail("appKeys", "must be \(expected)") }
        var keys: [String: [String]] = [:]
        var valid = true
        for (app, list) in value.members {
            // Element paths only: a message never shows a key.
            guard let appKeys = reader.strings("appKeys.\(app)", list, "an array of keys") else {
                valid = false
                continue
            }
            do {
                _ = try AppKeys([app: appKeys])
                keys[app] = appKeys
            } catch {
                valid = false
                reader.fail("appKeys.\(app)", error.message)
            }
        }
        if valid { appKeys = try? AppKeys(keys) }
    }

    /// The run-time policy this file sets, starting from `base`.
    package func policy(from base: GatewayPolicy = GatewayPolicy()) -> GatewayPolicy {
        var policy = base
        if let defaultAppID { policy.defaultAppID = defaultAppID }
        if let allowedAppIDs { policy.allowedAppIDs = Set(allowedAppIDs) }
        if let appKeys { policy.appKeys = appKeys }
        if let appIdentity { policy.appIdentity = appIdentity }
        if let dedupRetentionDays { policy.dedupRetentionMilliseconds = dedupRetentionDays * 24 * 3600 * 1000 }
        if let outboxMaxBatches { policy.outboxMaxBatches = outboxMaxBatches }
        if let outboxMaxBytes { policy.outboxMaxBytes = outboxMaxBytes }
        if let retryAfterSeconds { policy.retryAfterSeconds = retryAfterSeconds }
        if let logLevel { policy.logLevel = logLevel }
        if let diagnosticsGapGraceSeconds { policy.diagnosticsGapGraceSeconds = diagnosticsGapGraceSeconds }
        if let trustedProxies { policy.trustedProxies = trustedProxies }
        if let appLimits { policy.appLimits = appLimits }
        return policy
    }

    /// Applies every setting of the file except `listen`, `upstream` and `dataDir` (the caller
    /// resolves those with flags and environment first).
    package func apply(to configuration: inout GatewayConfiguration) {
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
    package static func parseListen(_ text: String) throws(GatewayError) -> (host: String, port: Int) {
        if let port = Int(text), (0...65535).contains(port) { return ("127.0.0.1", port) }
        guard let (host, port) = UpstreamAddress.split(text) else {
            throw GatewayError(.invalidConfiguration, "listen address \"\(text)\" is not HOST:PORT")
        }
        return (host, port)
    }
}
