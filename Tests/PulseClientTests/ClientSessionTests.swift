import MsgTrans
import MsgTransRuntime
import PulseClient
import PulseJSON
import PulseKit
import PulseProtocol
import PulseTestSupport
import Synchronization
import Testing

@Suite("Client session end to end over loopback", .serialized)
struct ClientSessionTests {
    @Test("CONNECT is the first frame; its result is tracked")
    func connectResult() async throws {
        let (server, session, _) = try await startServerSession { $0.configRevision = 4 }
        let info = try await session.connect()
        #expect(info.connectionId == "conn-1")
        #expect(info.configRevision == 4)
        #expect(info.serverHeartbeatIntervalMs == 60_000)
        #expect(info.heartbeatInterval == .seconds(60))
        #expect(info.collectKinds == [.crash, .error])
        #expect(session.isConnected)
        #expect(session.configRevision == 4)
        let log = server.log.withLock { $0 }
        #expect(log.firstFrames == [.clientConnect])
        #expect(log.connects == [testIdentity()])
        await server.stop(closing: session)
    }

    @Test("the first request connects on demand; uploads are accepted; compression follows the threshold")
    func uploads() async throws {
        let (server, session, _) = try await startServerSession()
        #expect(!session.isConnected)
        #expect(try await session.uploadEventBatch(encodedJSON: smallBatch()) == .accepted)
        #expect(try await session.uploadEventBatch(encodedJSON: largeBatch()) == .accepted)
        #expect(try await session.uploadCrashBatch(encodedJSON: largeBatch("crash")) == .accepted)
        let log = server.log.withLock { $0 }
        #expect(log.firstFrames == [.clientConnect])
        #expect(
            log.uploads.map(\.bizType) == [.clientEventBatchUpload, .clientEventBatchUpload, .clientCrashBatchUpload])
        #expect(log.uploads.map(\.compression) == [Compression.none, .zstd, .zstd])
        #expect(log.uploads[1].payload == largeBatch())
        await server.stop(closing: session)
    }

    @Test("the heartbeat follows the server's interval, carries the connection ID and reports new revisions")
    func heartbeats() async throws {
        let (server, session, clock) = try await startServerSession { $0.heartbeatIntervalMs = 20_000 }
        let revisions = session.configRevisionUpdates()
        try await session.connect()
        #expect(await eventually { clock.sleeperDeadlines.contains(.seconds(20)) })
        server.behavior.withLock { $0.configRevision = 5 }
        clock.advance(to: .seconds(20))
        #expect(await eventually { server.log.withLock { $0.heartbeats.count } == 1 })
        let heartbeat = try #require(server.log.withLock { $0.heartbeats.first })
        #expect(heartbeat.connectionId == "conn-1")
        #expect(heartbeat.sdkVersion == testIdentity().sdkVersion)
        #expect(heartbeat.clientTimeMs == 1_700_000_020_000)
        #expect(await eventually { session.configRevision == 5 })
        var iterator = revisions.makeAsyncIterator()
        // The stream keeps the newest value: the initial 1 may have been replaced by 5.
        var seen: [Int64] = []
        while seen.last != 5, let next = await iterator.next() {
            seen.append(next)
        }
        #expect(seen == [1, 5] || seen == [5])
        // The next heartbeat is scheduled one interval after the answer.
        #expect(await eventually { clock.sleeperDeadlines.contains(.seconds(40)) })
        await session.close()
        #expect(await iterator.next() == nil)
        await server.stop()
    }

    @Test("a server interval below 15 s is clamped to 15 s")
    func heartbeatClampEndToEnd() async throws {
        let (server, session, clock) = try await startServerSession { $0.heartbeatIntervalMs = 1_000 }
        let info = try await session.connect()
        #expect(info.heartbeatInterval == .seconds(15))
        #expect(await eventually { clock.sleeperDeadlines == [.seconds(15)] })
        clock.advance(to: .seconds(15))
        #expect(await eventually { server.log.withLock { $0.heartbeats.count } == 1 })
        await server.stop(closing: session)
    }

    @Test("401 on a request: reconnect with a new CONNECT and retry once")
    func unauthorizedRetry() async throws {
        let (server, session, _) = try await startServerSession()
        try await session.connect()
        server.behavior.withLock { $0.uploadCodes = [.unauthorized] }
        #expect(try await session.uploadEventBatch(encodedJSON: smallBatch()) == .accepted)
        let log = server.log.withLock { $0 }
        #expect(log.connects.count == 2)
        #expect(log.uploads.map(\.connectionId) == ["conn-1", "conn-2"])
        #expect(session.sessionInfo?.connectionId == "conn-2")
        // A second 401 in a row is returned, not retried again.
        server.behavior.withLock { $0.uploadCodes = [.unauthorized, .unauthorized] }
        let outcome = try await session.uploadEventBatch(encodedJSON: smallBatch())
        guard case .rejected(let response) = outcome else {
            Issue.record("expected a rejection, got \(outcome)")
            return
        }
        #expect(response.code == 401)
        #expect(response.senderAction == .reauthenticateThenRetry)
        #expect(server.log.withLock { $0.connects.count } == 3)
        await server.stop(closing: session)
    }

    @Test("the handshake observer sees every connection attempt: the first, the one after a 401, a rejection")
    func handshakeObserver() async throws {
        let server = try await TestPulseServer.start()
        let seen = Mutex<[String]>([])
        var configuration = PulseClientConfiguration(host: "127.0.0.1", port: server.port, identity: testIdentity())
        configuration.keepConnected = false
        configuration.handshakeObserver = { outcome in
            seen.withLock { list in
                switch outcome {
                case .success: list.append("ok")
                case .failure(let error): list.append("\(error.code)")
                }
            }
        }
        let session = PulseClientSession(
            configuration: configuration, clock: ManualClock(), random: RandomSource { 0 })
        try await session.connect()
        #expect(seen.withLock { $0 } == ["ok"])
        server.behavior.withLock { $0.uploadCodes = [.unauthorized] }
        #expect(try await session.uploadEventBatch(encodedJSON: smallBatch()) == .accepted)
        #expect(seen.withLock { $0 } == ["ok", "ok"])
        await session.close()
        server.behavior.withLock { $0.connectCode = .forbidden }
        let refused = PulseClientSession(
            configuration: configuration, clock: ManualClock(), random: RandomSource { 0 })
        await #expect(throws: PulseClientError.self) { try await refused.connect() }
        #expect(seen.withLock { $0 } == ["ok", "ok", "connectRejected"])
        await refused.close()
        await server.stop()
    }

    @Test("other codes are returned with their sender action, the connection stays")
    func otherCodes() async throws {
        let (server, session, _) = try await startServerSession {
            $0.uploadCodes = [.conflict, .tooManyRequests, .forbidden, .notImplemented]
        }
        var actions: [PulseSenderAction] = []
        for _ in 0..<4 {
            guard case .rejected(let response) = try await session.uploadCrashBatch(encodedJSON: smallBatch()) else {
                Issue.record("expected a rejection")
                return
            }
            actions.append(response.senderAction)
        }
        #expect(
            actions == [
                .pullConfigThenRetryOnce, .retryWithBackoff, .doNotRetryUntilPolicyChanges, .doNotRetryUntilPeerChanges,
            ])
        #expect(server.log.withLock { $0.connects.count } == 1)
        await server.stop(closing: session)
    }

    @Test("a request without an answer times out; the connection remains usable")
    func requestTimeout() async throws {
        let (server, session, _) = try await startServerSession { $0.hang = [.clientEventBatchUpload] }
        let error = await clientError {
            try await session.uploadEventBatch(encodedJSON: smallBatch(), timeout: .milliseconds(200))
        }
        #expect(error?.code == .timeout)
        #expect(session.isConnected)
        guard case .snapshot(let snapshot) = try await session.pullConfig(currentRevision: 0) else {
            Issue.record("expected a snapshot")
            return
        }
        #expect(snapshot.revision == 1)
        #expect(session.statistics.snapshot().requestTimeouts == 1)
        await server.stop(closing: session)
    }

    @Test("CONFIG_PULL: snapshot for an older revision, 409 for a revision from the future")
    func configPull() async throws {
        let (server, session, _) = try await startServerSession { $0.configRevision = 3 }
        try await expectConfigPulls(session, older: 2, future: 7, revision: 3)
        let pulls = server.log.withLock { $0.configPulls }
        #expect(pulls.map(\.configRevision) == [2, 7])
        #expect(pulls.first?.capabilities == testIdentity().capabilities)
        await server.stop(closing: session)
    }

    @Test("the update check reads data and fails open")
    func updateCheck() async throws {
        let (server, session, _) = try await startServerSession()
        let result = await session.checkForUpdate()
        #expect(result.action == .optional)
        #expect(result.latestBuildNumber == 50)
        server.behavior.withLock { $0.hang = [.clientAppUpdateCheck] }
        #expect(await session.checkForUpdate(timeout: .milliseconds(200)) == .noUpdate)
        await session.close()
        #expect(await session.checkForUpdate() == .noUpdate)
        await server.stop()
    }

    @Test("close fails pending requests and later ones with sessionClosed")
    func closeFailsPending() async throws {
        let (server, session, _) = try await startServerSession { $0.hang = [.clientEventBatchUpload] }
        let pending = Task {
            await clientError { try await session.uploadEventBatch(encodedJSON: smallBatch()) }
        }
        #expect(await eventually { server.log.withLock { $0.uploads.count } == 1 })
        await session.close()
        #expect(await pending.value?.code == .sessionClosed)
        let later = await clientError { try await session.send(bizType: .clientConfigPull, payload: bytes("{}")) }
        #expect(later?.code == .sessionClosed)
        #expect(!session.isConnected)
        await server.stop()
    }

    @Test("CLIENT_CONNECT cannot be sent through send")
    func connectIsReserved() async throws {
        let session = makeSession(port: 1)
        let error = await clientError { try await session.send(bizType: .clientConnect, payload: bytes("{}")) }
        #expect(error?.code == .requestFailed)
        await session.close()
    }

    @Test("concurrent requests on a fresh session share one connection attempt")
    func concurrentDemandSharesConnect() async throws {
        let (server, session, _) = try await startServerSession()
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                group.addTask {
                    (try? await session.uploadEventBatch(encodedJSON: smallBatch("b\(index)")).isAccepted) ?? false
                }
            }
            var accepted = 0
            for await outcome in group where outcome {
                accepted += 1
            }
            return accepted
        }
        #expect(outcomes == 20)
        #expect(server.log.withLock { $0.connects.count } == 1)
        #expect(server.log.withLock { Set($0.uploads.map(\.connectionId)) } == ["conn-1"])
        await server.stop(closing: session)
    }
}
