import Foundation
import PulseProtocol
import PulseStorage
import PulseTestSupport
import Synchronization
import Testing

@testable import PulseIngest

/// A wall clock tests move by hand.
extension ManualClock {
    /// The wall clock, epoch milliseconds.
    var milliseconds: Int64 { wallClockMilliseconds }
}

/// Wire constants written as literals on purpose: the tests check the server against the
/// contract's numbers, not against the registry it uses itself.
enum Biz {
    static let connect: UInt8 = 1
    static let heartbeat: UInt8 = 2
    static let configPull: UInt8 = 3
    static let crashBatch: UInt8 = 4
    static let eventBatch: UInt8 = 5
    static let updateCheck: UInt8 = 6
    static let control: UInt8 = 7
}

/// The app every test registers.
enum Fixture {
    static let appId = "app_7f3a"
    static let package = "com.example.shop"

    static var policy: IngestPolicy {
        IngestPolicy(apps: [
            IngestApp(
                appId: appId, packages: [package, "com.example.shop.beta"],
                policy: ConfigSnapshot(revision: 7, batchMaxEvents: 32, requiredCapabilities: ["batch_upload"]),
                releases: [
                    IngestRelease(platform: "ios", versionName: "2.4.0", buildNumber: 240),
                    IngestRelease(
                        platform: "ios", versionName: "2.5.0", buildNumber: 250, releaseNotes: "Faster checkout",
                        downloadUrl: "https://apps.example.com/shop"),
                    IngestRelease(platform: "ios", versionName: "2.3.0", buildNumber: 230, minimumSupportedBuild: 200),
                    IngestRelease(platform: "android", versionName: "9.0", buildNumber: 9_000, forced: true),
                ]),
            IngestApp(appId: "app_other", packages: ["*"], policy: ConfigSnapshot(revision: 1)),
        ])
    }

    static func connect(
        appId: String = appId, package: String? = package, device: String = "dev-1", installation: String = "inst-1",
        platform: String = "ios", sdk: String = "2.3.0", protocolVersion: Int = 2
    ) -> String {
        let packageJSON = package.map { "\"\($0)\"" } ?? "null"
        return """
            {"protocolVersion":\(protocolVersion),"appId":"\(appId)","deviceId":"\(device)",\
            "installationId":"\(installation)","platform":"\(platform)","deviceType":"phone",\
            "packageName":\(packageJSON),"appVersion":"2.4.1","buildNumber":241,"sdkVersion":"\(sdk)",\
            "capabilities":["batch_upload","compression:zstd","bidirectional_request"]}
            """
    }

    static func identity(
        appId: String = appId, package: String? = package, device: String = "dev-1", installation: String = "inst-1",
        platform: String = "ios", sdk: String = "2.3.0"
    ) -> String {
        let packageJSON = package.map { "\"\($0)\"" } ?? "null"
        return """
            {"projectId":"\(appId)","installationId":"\(installation)","deviceId":"\(device)","userId":null,\
            "appVersion":"2.4.1","buildNumber":241,"sdkVersion":"\(sdk)","platform":"\(platform)",\
            "packageName":\(packageJSON)}
            """
    }

    static func event(id: String, kind: String = "Analytics", name: String = "checkout", attributes: String = "{}")
        -> String
    {
        """
        {"id":"\(id)","timestamp":1764399990001,"sessionId":"sess-1","kind":"\(kind)","name":"\(name)",\
        "source":{"module":"ShopKit","imageUuid":null},"attributes":\(attributes)}
        """
    }

    static func eventBatch(batchId: String, eventIds: [String], identity: String = identity()) -> String {
        let events = eventIds.map { event(id: $0) }.joined(separator: ",")
        return #"{"identity":\#(identity),"events":[\#(events)],"batchId":"\#(batchId)"}"#
    }

    static func crash(id: String) -> String {
        """
        {"crashId":"\(id)","timestamp":1764399990001,"sessionId":"sess-1","signal":"SIGSEGV",\
        "exceptionType":"EXC_BAD_ACCESS","message":"bad pointer","stack":"Thread 0 Crashed",\
        "build":{"appVersion":"2.4.0","buildNumber":240,"imageUuids":[],"osVersion":"18.1","architecture":"arm64"},\
        "attachments":[],"attributes":{"thread":"main"}}
        """
    }

    static func crashBatch(batchId: String, crashIds: [String], identity: String = identity()) -> String {
        let crashes = crashIds.map { crash(id: $0) }.joined(separator: ",")
        return #"{"identity":\#(identity),"crashes":[\#(crashes)],"batchId":"\#(batchId)"}"#
    }

    /// 32 lower-case hex characters derived from `seed`, like SDK ids.
    static func hexID(_ seed: Int) -> String {
        let hex = String(seed, radix: 16)
        return String(repeating: "0", count: 32 - hex.count) + hex
    }
}

/// A running server in a fresh temporary data directory.
struct Harness: Sendable {
    let server: IngestServer
    let clock: ManualClock
    let directory: String

    static func start(
        policy: IngestPolicy = Fixture.policy, admin: Bool = false,
        configure: (inout IngestConfiguration) -> Void = { _ in }
    ) async throws -> Harness {
        let directory = try ScratchDirectory("ingest-tests").path
        let clock = ManualClock(wallClockMilliseconds: 1_764_400_000_000)
        var configuration = IngestConfiguration(dataDirectory: directory, policy: policy)
        configuration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
        configuration.clock = clock.clock
        if admin {
            configuration.admin = IngestListenAddress(host: "127.0.0.1", port: 0)
        }
        configure(&configuration)
        let server = try await IngestServer.start(configuration)
        return Harness(server: server, clock: clock, directory: directory)
    }

    /// A harness with the default configuration and a raw client that has sent nothing yet.
    static func startWithRawClient() async throws -> (harness: Harness, client: RawClient) {
        let harness = try await start()
        return (harness, await RawClient.connect(port: harness.server.port))
    }

    /// A harness with the default configuration and one client that has completed CLIENT_CONNECT.
    static func startConnected() async throws -> (harness: Harness, client: RawClient, connectionId: String) {
        let harness = try await start()
        let (client, connectionId) = try await harness.connectedClient()
        return (harness, client, connectionId)
    }

    /// Opens a raw client and completes CLIENT_CONNECT; returns it with its connection ID.
    func connectedClient(_ connect: String = Fixture.connect()) async throws -> (RawClient, String) {
        let client = await RawClient.connect(port: server.port)
        let response = try #require(await client.request(biz: Biz.connect, json: connect))
        try #require(response.code == 0, "connect failed: \(response.text)")
        let connectionId = try #require(response.dataObject["connectionId"] as? String)
        return (client, connectionId)
    }

    func stop() async {
        await server.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
