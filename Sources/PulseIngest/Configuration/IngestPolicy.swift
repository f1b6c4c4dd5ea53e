import Foundation
import PulseProtocol

/// Which apps the ingest server accepts and what it tells them: the content of the `--config` file.
///
/// The file format (JSON, documented in `docs/ingest.md`):
///
/// ```json
/// {
///   "heartbeatIntervalMs": 60000,
///   "acceptUnknownApps": false,
///   "apps": [
///     {"appId": "app_7f3a", "packages": ["com.example.shop"],
///      "policy": {"revision": 3, "batchMaxEvents": 64},
///      "releases": [{"platform": "ios", "versionName": "2.5.0", "buildNumber": 250}]}
///   ]
/// }
/// ```
public struct IngestPolicy: Sendable, Hashable {
    /// The apps, keyed by App ID.
    public var apps: [String: IngestApp]
    /// The heartbeat interval sent in connect and heartbeat results. Default 60 s.
    public var heartbeatIntervalMs: Int64
    /// When true, a connect for an App ID that is not listed is accepted as if the app were listed
    /// with any package, the default policy snapshot (revision 1) and no releases. For development
    /// and the gateway's embedded default; never set it for a shared deployment.
    public var acceptUnknownApps: Bool

    /// The default heartbeat interval, 60 s.
    public static let defaultHeartbeatIntervalMs: Int64 = 60_000

    /// Creates a policy.
    public init(
        apps: [IngestApp] = [], heartbeatIntervalMs: Int64 = IngestPolicy.defaultHeartbeatIntervalMs,
        acceptUnknownApps: Bool = false
    ) {
        self.apps = Dictionary(apps.map { ($0.appId, $0) }, uniquingKeysWith: { _, last in last })
        self.heartbeatIntervalMs = heartbeatIntervalMs
        self.acceptUnknownApps = acceptUnknownApps
    }

    /// A policy that accepts every app and package (see ``acceptUnknownApps``).
    public static let acceptingEveryApp = IngestPolicy(acceptUnknownApps: true)

    /// The entry for `appId`: the listed app, or with ``acceptUnknownApps`` a default entry; `nil`
    /// when the app is not allowed.
    public func app(_ appId: String) -> IngestApp? {
        if let app = apps[appId] {
            return app
        }
        guard acceptUnknownApps else {
            return nil
        }
        return IngestApp(appId: appId, packages: [IngestApp.anyPackage], policy: ConfigSnapshot(revision: 1))
    }

    /// Reads and validates a config file.
    ///
    /// - Throws: ``IngestError/Code/configurationUnreadable`` when the file cannot be read,
    ///   ``IngestError/Code/invalidConfiguration`` when its content is invalid.
    public static func load(path: String) throws(IngestError) -> IngestPolicy {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw IngestError(.configurationUnreadable, "cannot read the config file \(path)", underlying: error)
        }
        return try IngestPolicy(json: Array(data), source: path)
    }

    /// Decodes and validates the config file format.
    ///
    /// - Parameter source: names the input in error messages.
    /// - Throws: ``IngestError/Code/invalidConfiguration``.
    public init(json: [UInt8], source: String = "config") throws(IngestError) {
        let file: PolicyFile
        do {
            file = try JSONDecoder().decode(PolicyFile.self, from: Data(json))
        } catch {
            throw IngestError(.invalidConfiguration, "\(source) is not a valid ingest config file", underlying: error)
        }
        var seen = Set<String>()
        for app in file.apps {
            guard !app.appId.isEmpty else {
                throw IngestError(.invalidConfiguration, "\(source): an app has an empty appId")
            }
            guard seen.insert(app.appId).inserted else {
                throw IngestError(.invalidConfiguration, "\(source): app \(app.appId) is listed twice")
            }
            guard !app.packages.isEmpty else {
                throw IngestError(
                    .invalidConfiguration,
                    "\(source): app \(app.appId) allows no package (list packages, or \"*\" for any)")
            }
        }
        let interval = file.heartbeatIntervalMs ?? Self.defaultHeartbeatIntervalMs
        guard interval > 0 else {
            throw IngestError(.invalidConfiguration, "\(source): heartbeatIntervalMs must be positive")
        }
        self.init(
            apps: file.apps.map {
                IngestApp(
                    appId: $0.appId, packages: $0.packages, policy: $0.policy ?? ConfigSnapshot(revision: 1),
                    releases: $0.releases ?? [])
            },
            heartbeatIntervalMs: interval, acceptUnknownApps: file.acceptUnknownApps ?? false)
    }

    /// This policy as the successor of `previous` for a reload: every app whose snapshot changed
    /// without a higher revision gets `previous revision + 1`, and no app's revision goes down, so
    /// revisions stay strictly increasing per app while the server runs.
    ///
    /// - Returns: the adjusted policy and the App IDs whose revision changed.
    public func succeeding(_ previous: IngestPolicy) -> (policy: IngestPolicy, changedApps: [String]) {
        var next = self
        var changed: [String] = []
        for (appId, app) in apps {
            guard let old = previous.apps[appId] else {
                changed.append(appId)
                continue
            }
            var snapshot = app.policy
            var oldComparable = old.policy
            oldComparable.revision = snapshot.revision
            if oldComparable != snapshot {
                if snapshot.revision <= old.policy.revision {
                    snapshot.revision = old.policy.revision + 1
                }
            } else {
                snapshot.revision = max(snapshot.revision, old.policy.revision)
            }
            if snapshot.revision != old.policy.revision {
                changed.append(appId)
            }
            next.apps[appId]?.policy = snapshot
        }
        return (next, changed.sorted())
    }
}

/// The JSON shape of the config file.
private struct PolicyFile: Decodable {
    struct App: Decodable {
        var appId: String
        var packages: [String]
        var policy: ConfigSnapshot?
        var releases: [IngestRelease]?
    }

    var heartbeatIntervalMs: Int64?
    var acceptUnknownApps: Bool?
    var apps: [App]
}
