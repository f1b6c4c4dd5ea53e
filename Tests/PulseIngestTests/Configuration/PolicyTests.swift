import Foundation
import PulseJSON
import PulseKit
import PulseProtocol
import Testing

@testable import PulseIngest

@Suite struct PolicyTests {
    static let examplePath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/examples/ingest-config.json").path

    /// The documented example file loads.
    @Test func exampleConfigLoads() throws {
        let policy = try IngestPolicy.load(path: Self.examplePath)
        #expect(policy.heartbeatIntervalMs == 60_000)
        #expect(!policy.acceptUnknownApps)
        let shop = try #require(policy.apps["app_7f3a"])
        #expect(shop.packages == ["com.example.shop", "com.example.shop.beta"])
        #expect(shop.policy.revision == 3)
        #expect(shop.policy.samplingRate(for: .network) == 0.25)
        #expect(shop.releases.count == 3)
        let tools = try #require(policy.apps["app_internal_tools"])
        #expect(tools.policy.revision == 1)
        #expect(tools.allowsPackage(nil))
        #expect(tools.allowsPackage("anything"))
        #expect(policy.app("unknown") == nil)
    }

    @Test func packagePolicy() {
        let app = IngestApp(appId: "a", packages: ["p1", "p2"], policy: ConfigSnapshot(revision: 1))
        #expect(app.allowsPackage("p1"))
        #expect(app.allowsPackage("p2"))
        #expect(!app.allowsPackage("p3"))
        #expect(!app.allowsPackage(nil))
        #expect(IngestPolicy.acceptingEveryApp.app("whatever")?.allowsPackage(nil) == true)
    }

    @Test(arguments: [
        (#"{"apps":[{"appId":"a","packages":[]}]}"#, "allows no package"),
        (#"{"apps":[{"appId":"","packages":["p"]}]}"#, "apps[0].appId: must not be empty"),
        (#"{"apps":[{"appId":"a","packages":["p"]},{"appId":"a","packages":["p"]}]}"#, "listed twice"),
        (#"{"apps":[{"appId":"a","packages":["p"],"policy":{"revision":1,"batchMaxEvents":0}}]}"#, "not a valid"),
        (#"{"heartbeatIntervalMs":0,"apps":[]}"#, "heartbeatIntervalMs"),
        (#"{"apps":"#, "not a valid"),
        (#"{"apps":[],"heartbeatIntervalMS":1000}"#, "heartbeatIntervalMS: unknown config key"),
        (#"{"apps":[{"appId":"a","packages":["p"],"package":"q"}]}"#, "apps[0].package: unknown config key"),
        (
            #"{"apps":[{"appId":"a","packages":["p"],"releases":[{"platform":"ios","buildNumber":1,"notes":"x"}]}]}"#,
            "apps[0].releases[0].notes: unknown config key"
        ),
        (
            #"{"apps":[{"appId":"a","packages":["p"],"policy":{"revision":1,"killswitch":true}}]}"#,
            "apps[0].policy.killswitch: unknown config key"
        ),
        (
            #"{"apps":[{"appId":"a","packages":["p"],"policy":{"revision":1,"endpoints":[{"name":"i","url":"tcp://h:1","uri":"x"}]}}]}"#,
            "apps[0].policy.endpoints[0].uri: unknown config key"
        ),
    ])
    func invalidFilesAreRejected(json: String, fragment: String) {
        #expect {
            try IngestPolicy(json: Array(json.utf8))
        } throws: { error in
            let error = error as? IngestError
            return error?.code == .invalidConfiguration && error?.message.contains(fragment) == true
        }
    }

    /// A policy snapshot with several wrong members reports each of them, not only the first.
    @Test func everyWrongMemberOfAPolicySnapshotIsListed() {
        let json = #"""
            {"apps":[{"appId":"a","packages":["p"],
              "policy":{"revision":2,"batchMaxEvents":0,"compression":"lz4","diagnosticsLevel":"loud"}}]}
            """#
        let (policy, problems) = IngestPolicy.check(json: Array(json.utf8))
        #expect(policy == nil)
        #expect(problems.count == 3, "\(problems)")
        #expect(problems.allSatisfy { $0.path == "apps[0].policy" })
        #expect(problems.contains { $0.message.contains("batchMaxEvents") })
        #expect(problems.contains { $0.message.contains("lz4") })
        #expect(problems.contains { $0.message.contains("loud") })
    }

    @Test func missingFileIsUnreadable() {
        #expect {
            try IngestPolicy.load(path: "/nonexistent/ingest.json")
        } throws: { error in
            (error as? IngestError)?.code == .configurationUnreadable
        }
    }

    /// Reloading bumps the revision of a changed snapshot, keeps unchanged ones, never goes down.
    @Test func succeedingBumpsRevisions() {
        let old = IngestPolicy(apps: [
            IngestApp(appId: "a", packages: ["*"], policy: ConfigSnapshot(revision: 5)),
            IngestApp(appId: "b", packages: ["*"], policy: ConfigSnapshot(revision: 2)),
            IngestApp(appId: "c", packages: ["*"], policy: ConfigSnapshot(revision: 9)),
        ])
        let new = IngestPolicy(apps: [
            IngestApp(appId: "a", packages: ["*"], policy: ConfigSnapshot(revision: 5, killSwitch: true)),
            IngestApp(appId: "b", packages: ["*"], policy: ConfigSnapshot(revision: 2)),
            IngestApp(appId: "c", packages: ["*"], policy: ConfigSnapshot(revision: 1)),
            IngestApp(appId: "d", packages: ["*"], policy: ConfigSnapshot(revision: 1)),
        ])
        let (next, changed) = new.succeeding(old)
        #expect(next.apps["a"]?.policy.revision == 6)
        #expect(next.apps["a"]?.policy.killSwitch == true)
        #expect(next.apps["b"]?.policy.revision == 2)
        #expect(next.apps["c"]?.policy.revision == 9)
        #expect(next.apps["d"]?.policy.revision == 1)
        #expect(changed == ["a", "d"])
    }

    @Test func listenAddresses() throws {
        #expect(
            try IngestListenAddress(parsing: "127.0.0.1:6000") == IngestListenAddress(host: "127.0.0.1", port: 6000))
        #expect(try IngestListenAddress(parsing: "[::1]:0") == IngestListenAddress(host: "::1", port: 0))
        #expect(IngestListenAddress(host: "::1", port: 7).description == "[::1]:7")
        for bad in ["6000", "host:", ":6000", "1.2.3.4:70000", "::1:6000", "[::1]6000", "[::1"] {
            #expect(throws: IngestError.self) { try IngestListenAddress(parsing: bad) }
        }
    }

    /// Update decisions order by build number, never by version name.
    @Test func updateDecisionOrdersByBuildNumber() {
        let app = IngestApp(
            appId: "a", packages: ["*"], policy: ConfigSnapshot(revision: 1),
            releases: [
                IngestRelease(platform: "ios", versionName: "10.0", buildNumber: 100),
                IngestRelease(platform: "ios", versionName: "9.0", buildNumber: 120),
                IngestRelease(platform: "ios", packageName: "other", versionName: "99", buildNumber: 999),
            ])
        let decision = app.updateDecision(platform: "ios", packageName: "main", buildNumber: 110)
        #expect(decision.action == .optional)
        #expect(decision.latestBuildNumber == 120)
        #expect(decision.latestVersionName == "9.0")
        #expect(app.updateDecision(platform: "ios", packageName: "other", buildNumber: 110).latestBuildNumber == 999)
        #expect(app.updateDecision(platform: "android", packageName: "main", buildNumber: 1) == .noUpdate)
    }
}
