import MsgTrans
package import MsgTransRuntime
import PulseHTTP
package import PulseJSON
import PulseKit
package import PulseProtocol
import PulseStorage
import Synchronization

/// The reference Pulse ingest server: accepts Pulse clients over msgtrans, enforces the session
/// rules, serves all seven business types and stores batches durably in SQLite.
///
/// ```swift
/// var configuration = IngestConfiguration(dataDirectory: directory, policy: policy)
/// configuration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
/// let server = try await IngestServer.start(configuration)
/// // clients connect to server.port ...
/// let events = try await server.events(app: "app_7f3a", limit: 10)
/// await server.shutdown()
/// ```
///
/// Used by `pulsegate ingest`, by the gateway's embedded mode and by tests.
package final class IngestServer: Sendable {
    /// The bound msgtrans port (useful when configured with port 0).
    package let port: Int
    /// The bound msgtrans address, such as `127.0.0.1:6000`.
    package let localAddress: String
    /// The bound admin HTTP port, or `nil` without an admin endpoint.
    package let adminPort: Int?

    let core: IngestCore
    private let transport: MsgTransServer
    private let admin: HTTPServer?
    private let controlTimeout: Duration
    private let policyFile: String?

    private init(
        core: IngestCore, transport: MsgTransServer, admin: HTTPServer?, controlTimeout: Duration, policyFile: String?
    ) {
        self.policyFile = policyFile
        self.core = core
        self.transport = transport
        self.admin = admin
        self.adminPort = admin?.port
        self.port = transport.port
        self.localAddress = transport.localAddress
        self.controlTimeout = controlTimeout
    }

    /// Takes the data directory's lock, binds the msgtrans listener (connections made before the
    /// store is ready are closed at their first message), opens the store, then starts the admin
    /// endpoint. A second server on the same data directory, or on a busy msgtrans port, stops
    /// before the database is created or opened.
    ///
    /// - Throws: ``IngestError/Code/startFailed`` when another process holds the data directory or
    ///   an address cannot be bound, ``IngestError/Code/storageFailed`` when the data directory or
    ///   database cannot be used.
    package static func start(_ configuration: IngestConfiguration) async throws(IngestError) -> IngestServer {
        let lock = try IngestStore.lockDirectory(configuration.dataDirectory)
        let sessions = SessionSlot()
        var transportConfiguration = configuration.transport
        transportConfiguration.establishTimeout = configuration.connectDeadline
        let maxPayloadBytes = IngestCore.maxPayloadBytes(configuration)
        transportConfiguration.connection.overloadResponder = { _ in
            sessions.core?.counters.recordRejection(code: PulseResponseCode.tooManyRequests.rawValue)
            return Envelope.overloaded
        }
        transportConfiguration.connection.failureResponder = { _, error in
            if error.code == .malformedPayload {
                sessions.core?.counters.recordRejection(code: PulseResponseCode.badRequest.rawValue)
                if let cause = error.underlying as? MsgTransError, cause.code == .decompressedTooLarge {
                    return Envelope.failure(.badRequest, IngestCore.payloadTooLargeMessage(maxPayloadBytes))
                }
                return Envelope.failure(.badRequest, "payload cannot be decompressed")
            }
            sessions.core?.counters.recordRejection(code: PulseResponseCode.internalError.rawValue)
            return Envelope.failure(.internalError, "internal request failure")
        }
        let transport: MsgTransServer
        do {
            transport = try await MsgTransServer.start(
                host: configuration.listen.host, port: configuration.listen.port, configuration: transportConfiguration
            ) { _ in
                sessions.makeDelegate()
            }
        } catch {
            lock.release()
            throw IngestError(
                .startFailed, "cannot listen on \(configuration.listen) for msgtrans", underlying: error)
        }
        let store: IngestStore
        do {
            store = try await IngestStore.open(
                directory: configuration.dataDirectory, busyTimeout: configuration.storageBusyTimeout,
                maximumBatchSize: configuration.maxGroupCommit, clock: configuration.clock, lock: lock)
        } catch {
            await transport.shutdown()
            throw error
        }
        let core = IngestCore(configuration: configuration, store: store)
        do {
            try await store.closeDanglingConnections(at: configuration.clock.wallClockMilliseconds())
            core.counters.seed(try await store.counts())
        } catch {
            await transport.shutdown()
            await store.close()
            throw IngestError(.storageFailed, "cannot read the ingest database", underlying: error)
        }
        sessions.core = core

        var admin: HTTPServer?
        let reloader = AdminReloader()
        if let address = configuration.admin {
            let routes = AdminRoutes(
                core: core, transport: transport.statistics, controlTimeout: configuration.controlTimeout,
                reloader: reloader, version: configuration.version)
            let server = HTTPServer(
                configuration: HTTPServerConfiguration(
                    host: address.host, port: address.port, connectionLimit: 64, threadCount: 1,
                    maxBodyBytes: 1 << 20)
            ) { request in
                await routes.handle(request)
            }
            do {
                try server.start()
            } catch {
                await transport.shutdown()
                await store.close()
                throw IngestError(.startFailed, "cannot start the admin endpoint on \(address)", underlying: error)
            }
            admin = server
        }
        let server = IngestServer(
            core: core, transport: transport, admin: admin, controlTimeout: configuration.controlTimeout,
            policyFile: configuration.policyFile)
        reloader.set(server)
        return server
    }

    /// Shuts down gracefully: stops the admin endpoint and the listener, answers requests already
    /// in flight (batches being committed are acknowledged; new requests get 429), closes every
    /// connection, records the closes and closes the database. Calling it again waits for the same
    /// shutdown.
    package func shutdown() async {
        await admin?.shutdown(gracePeriod: .seconds(2))
        await transport.shutdown()
        await core.drainBackground()
        await core.store.close()
    }

    /// Suspends until the server has shut down; cancelling the calling task shuts it down.
    package func run() async {
        await transport.run()
        await shutdown()
    }

    // MARK: - Policy

    /// The policy in force.
    package var policy: IngestPolicy {
        core.policy
    }

    /// Replaces the policy (for a config reload). An app whose snapshot changed without a higher
    /// revision gets its previous revision + 1, and no revision goes down (see
    /// ``IngestPolicy/succeeding(_:)``); connected clients learn the new revision from their next
    /// heartbeat, or at once from a `config.invalidate` control RPC.
    ///
    /// - Returns: the App IDs whose revision changed.
    @discardableResult
    package func reload(_ policy: IngestPolicy) -> [String] {
        core.replacePolicy(policy)
    }

    /// Replaces the policy like ``reload(_:)`` and then sends `config.invalidate` (with the new
    /// `revision` as argument) to every connected client of each app whose revision changed, so
    /// they pull at once instead of at their next heartbeat.
    ///
    /// - Returns: the App IDs whose revision changed.
    @discardableResult
    package func reloadAndInvalidate(_ policy: IngestPolicy) async -> [String] {
        let changed = core.replacePolicy(policy)
        await withTaskGroup(of: Void.self) { group in
            for app in changed {
                let revision = core.policy.app(app)?.policy.revision ?? 0
                group.addTask {
                    _ = await self.sendControl(
                        app: app, route: Self.configInvalidate,
                        arguments: .object([JSONMember(key: "revision", value: .int(revision))]))
                }
            }
        }
        return changed
    }

    /// Re-reads ``IngestConfiguration/policyFile`` and applies it with ``reloadAndInvalidate(_:)``:
    /// what SIGHUP does for `pulsegate ingest`, also reachable as `POST /reload` on the admin
    /// endpoint. A file that fails to load leaves the running policy in place.
    ///
    /// - Returns: the App IDs whose revision changed.
    /// - Throws: ``IngestError/Code/invalidConfiguration`` without a policy file or when it fails to
    ///   load (the message says why).
    @discardableResult
    package func reloadPolicyFile() async throws(IngestError) -> [String] {
        guard let policyFile else {
            throw IngestError(.invalidConfiguration, "no config file to reload")
        }
        return await reloadAndInvalidate(try IngestPolicy.load(path: policyFile))
    }

    static let configInvalidate = ControlRoute("config.invalidate")!

    // MARK: - Control

    /// Sends a BIDIRECTIONAL_CONTROL_RPC (`{"route":…,"args":…,"schemaVersion":1}`) to every
    /// connected client of `app` and returns each client's answer.
    ///
    /// - Parameter timeout: per client; ``IngestConfiguration/controlTimeout`` when `nil`.
    package func sendControl(
        app: String, route: ControlRoute, arguments: JSONValue = .object([]), timeout: Duration? = nil
    ) async -> [IngestControlOutcome] {
        await core.sendControl(app: app, route: route, arguments: arguments, timeout: timeout ?? controlTimeout)
    }

    // MARK: - Queries

    /// The server's numbers now.
    package func statistics() -> IngestStatistics {
        core.statistics(transport: transport.statistics)
    }

    /// The transport's counters (frames, protocol faults, admission replies and closes, …).
    package var transportStatistics: MsgTransStatistics.Snapshot {
        transport.statistics.snapshot()
    }

    /// Whether the session `connectionId` is present now (its presence TTL has not expired).
    package func isPresent(connectionId: String) -> Bool {
        core.registry.isPresent(connectionId: connectionId, at: core.clock.wallClockMilliseconds())
    }

    /// The newest `limit` stored events of `app`, newest first.
    package func events(app: String, limit: Int = 100) async throws(IngestError) -> [IngestedEvent] {
        try await query("events") { try await $0.events(app: app, limit: limit) }
    }

    /// The newest `limit` stored crash reports of `app`, newest first.
    package func crashes(app: String, limit: Int = 100) async throws(IngestError) -> [IngestedCrash] {
        try await query("crashes") { try await $0.crashes(app: app, limit: limit) }
    }

    /// What the store holds for `app`.
    package func counts(app: String) async throws(IngestError) -> IngestCounts {
        try await query("counts") { try await $0.counts()[app] ?? IngestCounts() }
    }

    /// The durable connection history of `app`, oldest first.
    package func connectionHistory(app: String) async throws(IngestError) -> [ConnectionHistoryEntry] {
        try await query("connection history") { try await $0.connectionHistory(app: app) }
    }

    private func query<T: Sendable>(
        _ what: String, _ body: (IngestStore) async throws -> T
    ) async throws(IngestError) -> T {
        do {
            return try await body(core.store)
        } catch {
            throw IngestError(.storageFailed, "cannot read \(what)", underlying: error)
        }
    }
}

/// The listener's sessions: bound before the store is open, so until the core is set every
/// connection is closed at its first message (the client reconnects).
private final class SessionSlot: Sendable {
    private let current = Mutex<IngestCore?>(nil)

    var core: IngestCore? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    func makeDelegate() -> any MsgTransConnectionDelegate {
        guard let core else { return StartingSession() }
        return PulseSession(core: core)
    }
}

/// A connection accepted while the server was starting: closed at its first message.
private struct StartingSession: MsgTransConnectionDelegate {
    func admit(_ header: FrameHeader, on connection: MsgTransConnection) -> MsgTransAdmission {
        .close
    }

    func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async throws -> MsgTransReply {
        throw IngestError(.startFailed, "the ingest server is starting")
    }
}
