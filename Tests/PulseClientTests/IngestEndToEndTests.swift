import Foundation
import PulseClient
import PulseIngest
import PulseJSON
import PulseKit
import PulseProtocol
import PulseTestSupport
import Testing

/// The session against the reference ingest server (`PulseIngest`) over loopback.
@Suite("Client session against the PulseIngest reference server", .serialized)
struct IngestEndToEndTests {
    static let appId = "app-test"

    /// An ingest server on a free loopback port with its own temporary data directory.
    struct Ingest: SessionPeer {
        let server: IngestServer
        let directory: String

        static func start(
            revision: Int64 = 3, heartbeatIntervalMs: Int64 = 20_000, releases: [IngestRelease] = [],
            admin: Bool = false, directory: String? = nil, port: Int = 0
        ) async throws -> Ingest {
            let directory = try directory ?? ScratchDirectory("pulseclient-ingest").path
            var configuration = IngestConfiguration(
                dataDirectory: directory,
                policy: policy(revision: revision, heartbeatIntervalMs: heartbeatIntervalMs, releases: releases))
            configuration.listen = IngestListenAddress(host: "127.0.0.1", port: port)
            if admin {
                configuration.admin = IngestListenAddress(host: "127.0.0.1", port: 0)
            }
            return Ingest(server: try await IngestServer.start(configuration), directory: directory)
        }

        static func policy(revision: Int64, heartbeatIntervalMs: Int64, releases: [IngestRelease] = []) -> IngestPolicy
        {
            IngestPolicy(
                apps: [
                    IngestApp(
                        appId: IngestEndToEndTests.appId, packages: ["com.example.app"],
                        policy: ConfigSnapshot(revision: revision), releases: releases)
                ], heartbeatIntervalMs: heartbeatIntervalMs)
        }

        func stop() async {
            await stop(removingData: true)
        }

        func stop(removingData: Bool) async {
            await server.shutdown()
            if removingData {
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
    }

    static let identity = testIdentity(appId: appId)

    static var batchIdentity: BatchIdentity {
        BatchIdentity(
            projectId: identity.appId, installationId: identity.installationId, deviceId: identity.deviceId,
            userId: nil, appVersion: identity.appVersion, buildNumber: identity.buildNumber,
            sdkVersion: identity.sdkVersion, platform: identity.platform, packageName: identity.packageName)
    }

    static func eventBatch(_ batchId: String, events count: Int, identity: BatchIdentity = batchIdentity) -> [UInt8] {
        let events = (0..<count).map { index in
            PulseEvent(
                id: String(repeating: "0", count: 24) + String(format: "%08x", index),
                timestamp: 1_700_000_000_000 + Int64(index),
                sessionId: "session-1", kind: .analytics, name: "screen_view",
                attributes: [JSONMember(key: "screen", value: .string("home-\(index)"))])
        }
        return EventBatch(identity: identity, events: events, batchId: batchId).encodeJSON()
    }

    static func crashBatch(_ batchId: String) -> [UInt8] {
        let crashes = ["crash-a", "crash-b"].map { id in
            CrashReport(
                crashId: id, timestamp: 1_700_000_000_000, sessionId: "session-1", signal: "SIGSEGV",
                build: CrashBuild(appVersion: identity.appVersion, buildNumber: identity.buildNumber))
        }
        return CrashBatch(identity: batchIdentity, crashes: crashes, batchId: batchId).encodeJSON()
    }

    @Test("connect and heartbeat: session tracked, presence and history kept, new revisions reach the client")
    func connectAndHeartbeat() async throws {
        let ingest = try await Ingest.start(revision: 3, heartbeatIntervalMs: 20_000)
        let clock = ManualClock()
        let session = makeSession(port: ingest.server.port, clock: clock, identity: Self.identity)
        let info = try await session.connect()
        #expect(!info.connectionId.isEmpty)
        #expect(info.configRevision == 3)
        #expect(info.heartbeatInterval == .seconds(20))
        #expect(ingest.server.isPresent(connectionId: info.connectionId))
        #expect(await eventually { ((try? await ingest.server.connectionHistory(app: Self.appId)) ?? []).count == 1 })

        ingest.server.reload(Ingest.policy(revision: 4, heartbeatIntervalMs: 20_000))
        #expect(await eventually { clock.sleeperDeadlines.contains(.seconds(20)) })
        clock.advance(to: .seconds(20))
        #expect(await eventually { session.configRevision == 4 })
        #expect(
            await eventually {
                ((try? await ingest.server.connectionHistory(app: Self.appId)) ?? []).first?.heartbeatCount == 1
            })
        let history = try await ingest.server.connectionHistory(app: Self.appId)
        #expect(history.first?.connectionId == info.connectionId)
        #expect(history.first?.deviceId == Self.identity.deviceId)
        #expect(session.sessionInfo?.connectionId == info.connectionId)
        await ingest.stop(closing: session)
    }

    @Test("batch uploads are durably accepted, and replays store nothing twice")
    func uploadsAreIdempotent() async throws {
        let ingest = try await Ingest.start()
        let session = makeSession(port: ingest.server.port, identity: Self.identity)
        let batch = Self.eventBatch("batch-1", events: 64)
        #expect(batch.count > 1024)  // travels zstd-compressed
        #expect(try await session.uploadEventBatch(encodedJSON: batch) == .accepted)
        #expect(try await session.uploadEventBatch(encodedJSON: batch) == .accepted)
        // A different batch id carrying the same events is absorbed by the event ids.
        #expect(try await session.uploadEventBatch(encodedJSON: Self.eventBatch("batch-2", events: 64)) == .accepted)
        #expect(try await session.uploadEventBatch(encodedJSON: Self.eventBatch("batch-3", events: 2)) == .accepted)
        #expect(try await session.uploadCrashBatch(encodedJSON: Self.crashBatch("crashes-1")) == .accepted)
        #expect(try await session.uploadCrashBatch(encodedJSON: Self.crashBatch("crashes-1")) == .accepted)
        let counts = try await ingest.server.counts(app: Self.appId)
        #expect(counts.events == 64)
        #expect(counts.crashes == 2)
        #expect(counts.crashBatches == 1)
        let stored = try await ingest.server.events(app: Self.appId, limit: 200)
        #expect(stored.count == 64)
        await ingest.stop(closing: session)
    }

    @Test("a batch whose identity differs from the connected one is rejected with 403")
    func identityMismatch() async throws {
        let ingest = try await Ingest.start()
        let session = makeSession(port: ingest.server.port, identity: Self.identity)
        var other = Self.batchIdentity
        other.deviceId = "someone-else"
        let outcome = try await session.uploadEventBatch(
            encodedJSON: Self.eventBatch("foreign", events: 1, identity: other))
        guard case .rejected(let response) = outcome else {
            Issue.record("expected 403, got \(outcome)")
            return
        }
        #expect(response.knownCode == .forbidden)
        #expect(response.senderAction == .doNotRetryUntilPolicyChanges)
        #expect(try await ingest.server.counts(app: Self.appId).events == 0)
        #expect(session.isConnected)
        await ingest.stop(closing: session)
    }

    @Test("an app the server does not allow is rejected at CONNECT")
    func unknownApp() async throws {
        let ingest = try await Ingest.start()
        let session = makeSession(
            port: ingest.server.port, keepConnected: false, identity: testIdentity(appId: "not-allowed"))
        let error = await clientError { try await session.connect() }
        #expect(error?.code == .connectRejected)
        #expect(error?.responseCode == 403)
        await ingest.stop(closing: session)
    }

    @Test("CONFIG_PULL and the update check")
    func configAndUpdate() async throws {
        let release = IngestRelease(platform: "ios", versionName: "2.0.0", buildNumber: 50, releaseNotes: "faster")
        let ingest = try await Ingest.start(revision: 3, releases: [release])
        let session = makeSession(port: ingest.server.port, identity: Self.identity)
        try await expectConfigPulls(session, older: 0, future: 99, revision: 3)
        let update = await session.checkForUpdate()
        #expect(update.action == .optional)
        #expect(update.latestBuildNumber == 50)
        await ingest.stop(closing: session)
    }

    @Test("control RPC from the server: the flush handler uploads on the same connection; unknown routes get 404")
    func controlFromServer() async throws {
        let ingest = try await Ingest.start(admin: true)
        let session = makeSession(port: ingest.server.port, identity: Self.identity)
        session.setControlHandler(.telemetryFlush) { _ in
            let outcome = try await session.uploadEventBatch(encodedJSON: Self.eventBatch("flush-1", events: 3))
            return .object([JSONMember(key: "flushed", value: .int(outcome.isAccepted ? 3 : 0))])
        }
        session.setControlHandler(.configInvalidate) { request in
            .object([JSONMember(key: "seen", value: request.args.first?.value ?? .null)])
        }
        let info = try await session.connect()
        let outcomes = await ingest.server.sendControl(app: Self.appId, route: .telemetryFlush)
        #expect(outcomes.count == 1)
        #expect(outcomes.first?.connectionId == info.connectionId)
        #expect(outcomes.first?.code == 0)
        #expect(outcomes.first?.data == .object([JSONMember(key: "flushed", value: .int(3))]))
        #expect(try await ingest.server.counts(app: Self.appId).events == 3)

        let unknown = await ingest.server.sendControl(
            app: Self.appId, route: try ControlRoute(validating: "audit.export_all"))
        #expect(unknown.first?.code == 404)

        // The same through the admin endpoint.
        let adminPort = try #require(ingest.server.adminPort)
        let body = bytes(#"{"app":"app-test","route":"config.invalidate","args":{"revision":5}}"#)
        let answer = try #require(await httpPost(port: adminPort, path: "/control", body: body))
        #expect(answer.status == 200)
        let json = try JSONValue.parse(answer.body)
        guard case .array(let list)? = json["outcomes"], let first = list.first else {
            Issue.record("no outcomes in the admin answer")
            return
        }
        #expect(first["code"] == .int(0))
        #expect(first["data"] == .object([JSONMember(key: "seen", value: .int(5))]))
        #expect(session.isConnected)
        await ingest.stop(closing: session)
    }

    @Test("ingest outage and recovery: the session reconnects once the server is back")
    func outageAndRecovery() async throws {
        let first = try await Ingest.start()
        let port = first.server.port
        let clock = ManualClock()
        let session = makeSession(port: port, clock: clock, identity: Self.identity)
        let before = try await session.connect()
        #expect(try await session.uploadEventBatch(encodedJSON: Self.eventBatch("before", events: 2)) == .accepted)
        await first.stop(removingData: false)
        #expect(await eventually { !session.isConnected })
        let second = try await Ingest.start(directory: first.directory, port: port)
        // Background reconnect after the jittered delay (top of range: 1 s).
        #expect(await eventually { clock.sleeperDeadlines.contains(.seconds(1)) })
        clock.advance(to: .seconds(1))
        #expect(await eventually { session.isConnected })
        #expect(session.sessionInfo?.connectionId != before.connectionId)
        #expect(try await session.uploadEventBatch(encodedJSON: Self.eventBatch("after", events: 4)) == .accepted)
        #expect(try await second.server.counts(app: Self.appId).events == 4)
        await second.stop(closing: session)
    }
}
