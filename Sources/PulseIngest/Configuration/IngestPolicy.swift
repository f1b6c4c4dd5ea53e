import Foundation
package import PulseJSON
import PulseKit
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
package struct IngestPolicy: Sendable, Hashable {
    /// The apps, keyed by App ID.
    package var apps: [String: IngestApp]
    /// The heartbeat interval sent in connect and heartbeat results. Default 60 s.
    package var heartbeatIntervalMs: Int64
    /// When true, a connect for an App ID that is not listed is accepted as if the app were listed
    /// with any package, the default policy snapshot (revision 1) and no releases. For development
    /// and the gateway's embedded default; never set it for a shared deployment.
    package var acceptUnknownApps: Bool

    /// The default heartbeat interval, 60 s.
    package static let defaultHeartbeatIntervalMs: Int64 = 60_000

    /// Creates a policy.
    package init(
        apps: [IngestApp] = [], heartbeatIntervalMs: Int64 = IngestPolicy.defaultHeartbeatIntervalMs,
        acceptUnknownApps: Bool = false
    ) {
        self.apps = Dictionary(apps.map { ($0.appId, $0) }, uniquingKeysWith: { _, last in last })
        self.heartbeatIntervalMs = heartbeatIntervalMs
        self.acceptUnknownApps = acceptUnknownApps
    }

    /// A policy that accepts every app and package (see ``acceptUnknownApps``).
    package static let acceptingEveryApp = IngestPolicy(acceptUnknownApps: true)

    /// The entry for `appId`: the listed app, or with ``acceptUnknownApps`` a default entry; `nil`
    /// when the app is not allowed.
    package func app(_ appId: String) -> IngestApp? {
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
    package static func load(path: String) throws(IngestError) -> IngestPolicy {
        try IngestPolicy(json: try read(path: path), source: path)
    }

    /// The bytes of a config file.
    ///
    /// - Throws: ``IngestError/Code/configurationUnreadable`` naming the file.
    package static func read(path: String) throws(IngestError) -> [UInt8] {
        do {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw IngestError(.configurationUnreadable, "cannot read the config file \(path)", underlying: error)
        }
    }

    /// Decodes and validates the config file format.
    ///
    /// - Parameter source: names the input in error messages.
    /// - Throws: ``IngestError/Code/invalidConfiguration`` listing every problem (``check(json:)``).
    package init(json: [UInt8], source: String = "config") throws(IngestError) {
        let (policy, problems) = Self.check(json: json)
        guard let policy, problems.isEmpty else {
            throw IngestError(
                .invalidConfiguration,
                "\(source) is not a valid ingest config file (\(ConfigurationProblem.count(problems))): \(ConfigurationProblem.summary(problems))"
            )
        }
        self = policy
    }

    /// Parses the config file format and checks every value, collecting every problem with its
    /// key path (`apps[1].packages`, `apps[0].releases[2].buildNumber`): the one check behind
    /// `pulsegate ingest` (start, SIGHUP, `POST /reload`) and `pulsegate ingest validate`. A policy
    /// snapshot (`apps[i].policy`) reports a problem for each member that is wrong on its own. A key the format does not define is a
    /// problem too (a typo should not pass silently), as in the gateway's config file.
    package static func check(json: [UInt8]) -> (IngestPolicy?, [ConfigurationProblem]) {
        let root: JSONNode
        do {
            root = try JSONParser(maxDepth: 16, maxBytes: 16 << 20).parse(json).root
        } catch {
            return (nil, [ConfigurationProblem("", "not valid JSON (\(error.message))")])
        }
        var reader = ConfigurationReader()
        guard reader.object("", root) else { return (nil, reader.problems) }
        var interval = defaultHeartbeatIntervalMs
        var acceptUnknown = false
        var apps: [IngestApp] = []
        var sawApps = false
        for (key, value) in root.members {
            switch key {
            case "heartbeatIntervalMs":
                if let read = reader.positive(key, value) { interval = Int64(read) }
            case "acceptUnknownApps":
                acceptUnknown = reader.bool(key, value) ?? false
            case "apps":
                sawApps = true
                guard reader.array(key, value) else { continue }
                var seen: [String: Int] = [:]
                for (index, element) in value.elements.enumerated() {
                    let path = "apps[\(index)]"
                    guard let app = readApp(path, element, &reader) else { continue }
                    if let first = seen[app.appId] {
                        reader.fail(path + ".appId", "\(app.appId) is listed twice (also apps[\(first)])")
                    } else {
                        seen[app.appId] = index
                    }
                    apps.append(app)
                }
            default:
                reader.fail(key, "unknown config key")
            }
        }
        if !sawApps { reader.fail("apps", "is required (an array of apps, possibly empty)") }
        guard reader.problems.isEmpty else { return (nil, reader.problems) }
        return (IngestPolicy(apps: apps, heartbeatIntervalMs: interval, acceptUnknownApps: acceptUnknown), [])
    }

    /// One element of `apps`, or `nil` with its problems recorded.
    private static func readApp(_ path: String, _ node: JSONNode, _ reader: inout ConfigurationReader) -> IngestApp? {
        guard reader.object(path, node) else { return nil }
        let before = reader.problems.count
        var appId: String?
        var packages: [String]?
        var snapshot = ConfigSnapshot(revision: 1)
        var releases: [IngestRelease] = []
        for (key, value) in node.members {
            let name = "\(path).\(key)"
            switch key {
            case "appId": appId = reader.nonEmptyString(name, value)
            case "packages":
                packages = reader.strings(name, value)
                if packages?.isEmpty == true {
                    reader.fail(name, "allows no package (list packages, or \"*\" for any)")
                }
            case "policy":
                guard !value.isNull else { continue }
                // The wire decoder skips members it does not know (for newer peers); in a config
                // file an unknown member is a typo, a problem with its path like any other key.
                reader.rejectUnknownKeys(name, value, known: ConfigSnapshot.memberNames)
                if value.kind == .object, let endpoints = value["endpoints"], endpoints.kind == .array {
                    for (index, endpoint) in endpoints.elements.enumerated() {
                        reader.rejectUnknownKeys(
                            "\(name).endpoints[\(index)]", endpoint, known: ConfigEndpoint.memberNames)
                    }
                }
                do {
                    snapshot = try ConfigSnapshot(jsonNode: value)
                } catch {
                    for message in snapshotProblems(value, first: error.message) { reader.fail(name, message) }
                }
            case "releases":
                guard !value.isNull, reader.array(name, value) else { continue }
                for (index, element) in value.elements.enumerated() {
                    if let release = readRelease("\(name)[\(index)]", element, &reader) { releases.append(release) }
                }
            default:
                reader.fail(name, "unknown config key")
            }
        }
        if appId == nil && node.members.first(where: { $0.0 == "appId" }) == nil {
            reader.fail(path + ".appId", "is required")
        }
        if packages == nil && node.members.first(where: { $0.0 == "packages" }) == nil {
            reader.fail(path + ".packages", "is required (list packages, or \"*\" for any)")
        }
        guard reader.problems.count == before, let appId, let packages else { return nil }
        return IngestApp(appId: appId, packages: packages, policy: snapshot, releases: releases)
    }

    /// Every problem of a policy snapshot, not only the first its wire decoder reports: each member
    /// is decoded on its own beside the snapshot's `revision`, and `first` (the whole snapshot's
    /// problem, which may be a rule across fields) is added when no single member explains it.
    private static func snapshotProblems(_ node: JSONNode, first: String) -> [String] {
        guard node.kind == .object else { return [first] }
        let revision = node["revision"]
        var problems: [String] = []
        func decode(_ key: String?, _ member: JSONNode?) {
            var builder = JSONDocumentBuilder(nodes: 8, stringBytes: 64)
            builder.beginObject()
            builder.key("revision")
            if let revision { builder.copy(revision) } else { builder.int(1) }
            if let key, let member {
                var key = key
                key.withUTF8 { builder.key(utf8: $0) }
                builder.copy(member)
            }
            builder.endObject()
            do {
                _ = try ConfigSnapshot(jsonNode: builder.finish().root)
            } catch {
                if !problems.contains(error.message) { problems.append(error.message) }
            }
        }
        decode(nil, nil)
        for (key, member) in node.members where key != "revision" { decode(key, member) }
        if problems.isEmpty { problems.append(first) }
        return problems
    }

    /// One element of an app's `releases`, or `nil` with its problems recorded.
    private static func readRelease(_ path: String, _ node: JSONNode, _ reader: inout ConfigurationReader)
        -> IngestRelease?
    {
        guard reader.object(path, node) else { return nil }
        let before = reader.problems.count
        var release = IngestRelease(platform: "", buildNumber: 0)
        var sawPlatform = false
        var sawBuild = false
        func text(_ name: String, _ value: JSONNode) -> String? {
            value.isNull ? nil : reader.string(name, value)
        }
        for (key, value) in node.members {
            let name = "\(path).\(key)"
            switch key {
            case "platform":
                sawPlatform = true
                release.platform = reader.nonEmptyString(name, value) ?? ""
            case "buildNumber":
                sawBuild = true
                release.buildNumber = Int64(reader.integer(name, value) ?? 0)
            case "packageName": release.packageName = text(name, value)
            case "versionName": release.versionName = text(name, value)
            case "releaseNotes": release.releaseNotes = text(name, value)
            case "downloadUrl": release.downloadUrl = text(name, value)
            case "forced": release.forced = value.isNull ? false : reader.bool(name, value) ?? false
            case "minimumSupportedBuild":
                release.minimumSupportedBuild = value.isNull ? nil : reader.integer(name, value).map(Int64.init)
            default: reader.fail(name, "unknown config key")
            }
        }
        if !sawPlatform { reader.fail(path + ".platform", "is required") }
        if !sawBuild { reader.fail(path + ".buildNumber", "is required") }
        return reader.problems.count == before ? release : nil
    }

    /// This policy as the successor of `previous` for a reload: every app whose snapshot changed
    /// without a higher revision gets `previous revision + 1`, and no app's revision goes down, so
    /// revisions stay strictly increasing per app while the server runs.
    ///
    /// - Returns: the adjusted policy and the App IDs whose revision changed.
    package func succeeding(_ previous: IngestPolicy) -> (policy: IngestPolicy, changedApps: [String]) {
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
