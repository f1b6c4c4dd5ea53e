import CPulseShims
import Foundation
import PulseHTTP
import PulseHashing
package import PulseKit
import PulseStorage
import Synchronization

/// Composition of the gateway: storage, intake, forwarder, HTTP server, pruning.
///
/// ```swift
/// let gateway = try await GatewayApp.start(GatewayConfiguration(dataDirectory: dir, listenPort: 0))
/// // POST to http://127.0.0.1:\(gateway.httpPort)/v1/logs
/// await gateway.shutdown()
/// ```
package enum GatewayApp {
    /// Starts every component and returns once the HTTP server listens: ``bind(_:environment:)``,
    /// then ``BoundGateway/start(upstream:)``.
    ///
    /// - Throws: ``GatewayError`` (`invalidConfiguration`, `storage`, `startFailed`).
    package static func start(
        _ configuration: GatewayConfiguration, environment: GatewayEnvironment = GatewayEnvironment()
    ) async throws -> RunningGateway {
        try await bind(configuration, environment: environment).start()
    }

    /// The first step of a start, before anything is written: validates the configuration, takes
    /// the data directory's lock (`pulsegate.lock`, created with the directory if needed, held
    /// until ``RunningGateway/shutdown()``) and binds the listen address. The databases are not
    /// created or opened yet, so a second gateway on the same data directory, or on a busy port,
    /// fails here having changed nothing. Requests that arrive before
    /// ``BoundGateway/start(upstream:)`` finishes are answered 503 with `Retry-After`.
    ///
    /// - Throws: ``GatewayError`` with `invalidConfiguration`, or `startFailed` (the directory
    ///   cannot be created, another process holds its lock, the address cannot be bound).
    package static func bind(
        _ configuration: GatewayConfiguration, environment: GatewayEnvironment = GatewayEnvironment()
    ) throws -> BoundGateway {
        try configuration.validate()
        configureAllocator()
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw GatewayError(
                .startFailed, "cannot create the data directory \(configuration.dataDirectory)", underlying: error)
        }
        let lock: FileLock
        do {
            lock = try FileLock.lockDataDirectory(configuration.dataDirectory)
        } catch {
            throw GatewayError(.startFailed, error.message)
        }
        let router = RouterSlot(retryAfterSeconds: configuration.policy.retryAfterSeconds, random: environment.random)
        let memoryBudget = RequestMemoryBudget(limitBytes: configuration.requestMemoryBudgetBytes)
        var serverConfiguration = HTTPServerConfiguration(
            host: configuration.listenHost, port: configuration.listenPort,
            connectionLimit: configuration.httpConnectionLimit, idleTimeout: configuration.httpIdleTimeout,
            threadCount: configuration.httpThreads, maxBodyBytes: configuration.maxBodyBytes,
            shutdownRetryAfterSeconds: configuration.policy.retryAfterSeconds, requestMemoryBudget: memoryBudget,
            requestMemoryEstimate: GatewayIntake.reservation(headers:wireBytes:),
            headerTimeout: configuration.httpHeaderTimeout, bodyTimeout: configuration.httpBodyTimeout,
            minBodyBytesPerSecond: configuration.httpMinBodyBytesPerSecond, tls: try configuration.tls?.load())
        serverConfiguration.earlyResponse = { request, response in router.early(request, &response) }
        let server = HTTPServer(configuration: serverConfiguration) { request, responder in
            router.dispatch(request) { responder.respond($0) }
        }
        do {
            try server.start()
        } catch {
            lock.release()
            throw GatewayError(.startFailed, "the HTTP server could not start", underlying: error)
        }
        return BoundGateway(
            configuration: configuration, environment: environment, lock: lock, server: server, router: router)
    }
}

/// A gateway that holds its data directory's lock and its listen address but has not opened its
/// storage yet (``GatewayApp/bind(_:environment:)``). Start it, or ``cancel()`` it.
package final class BoundGateway: Sendable {
    /// The bound HTTP port.
    package var httpPort: Int { server.port ?? configuration.listenPort }

    private let configuration: GatewayConfiguration
    private let environment: GatewayEnvironment
    private let lock: FileLock
    private let server: HTTPServer
    private let router: RouterSlot

    fileprivate init(
        configuration: GatewayConfiguration, environment: GatewayEnvironment, lock: FileLock, server: HTTPServer,
        router: RouterSlot
    ) {
        self.configuration = configuration
        self.environment = environment
        self.lock = lock
        self.server = server
        self.router = router
    }

    /// Stops listening and releases the data directory's lock (a start that is given up).
    package func cancel() async {
        await server.shutdown(gracePeriod: .zero)
        lock.release()
    }

    /// Opens storage, starts the forwarder and pruning, and starts answering requests.
    ///
    /// - Parameter upstream: the upstream to forward to, instead of the configuration's.
    /// - Throws: ``GatewayError`` (`storage`); the lock is released and the address closed.
    package func start(upstream: UpstreamAddress? = nil) async throws -> RunningGateway {
        do {
            return try await startComponents(upstream: upstream)
        } catch {
            await cancel()
            throw error
        }
    }

    private func startComponents(upstream: UpstreamAddress?) async throws -> RunningGateway {
        var configuration = self.configuration
        if let upstream { configuration.upstream = upstream }
        let logger = environment.logger
        logger.level = configuration.policy.logLevel
        let store: any GatewayStoring
        if let url = configuration.store {
            store = try await PostgresGatewayStore.open(url: url, leaseDuration: configuration.storeLease)
        } else {
            store = try await GatewayStore.open(
                dataDirectory: configuration.dataDirectory, commitGathering: configuration.commitGathering)
        }
        let metrics = GatewayMetrics()
        metrics.apps.configure(apps: configuration.policy.labelledApps)
        let telemetry = GatewayTelemetry(
            metrics: metrics, environment: environment, outboxDepth: { [store] in store.outboxDepth.rows })
        telemetry.configure(limits: GatewayTelemetry.limits(configuration, policy: configuration.policy))

        var connector: (any UpstreamConnector)?
        let upstreamDescription: String
        if let override = environment.connector {
            connector = override
            upstreamDescription = "injected"
        } else if let upstream = configuration.upstream {
            connector = PulseClientUpstreamConnector(
                host: upstream.host, port: upstream.port, requestTimeout: configuration.forwarding.requestTimeout,
                connectTimeout: configuration.forwarding.connectTimeout, metrics: metrics,
                maxInFlightPerConnection: configuration.forwarding.forwardWindow)
            upstreamDescription = upstream.description
        } else {
            // `pulsegate serve` never gets here: its composition (GatewaySystem) starts the embedded
            // ingest server and sets the upstream. A gateway started directly without one only stores.
            connector = nil
            upstreamDescription = "none"
            logger.warning("no upstream configured; batches are stored in the outbox and not forwarded")
        }
        var sessionFactory: PolicyCache.SessionFactory?
        if var counted = connector as? PulseClientUpstreamConnector {
            counted.metrics = metrics
            connector = counted
            let pulse = counted
            sessionFactory = { identity in pulse.makeSession(identity: identity, keepConnected: true) }
        }
        let policyCache = PolicyCache(
            store: store, logger: logger, clock: environment.clock,
            installationID: "pulsegate-" + String(SHA256.hexDigest(Array(configuration.dataDirectory.utf8)).prefix(32)),
            factory: sessionFactory)
        await policyCache.load()
        let forwarder = connector.map {
            Forwarder(
                store: store, connector: $0, settings: configuration.forwarding, clock: environment.clock,
                random: environment.random, metrics: metrics, logger: logger,
                policy: policyCache, health: telemetry.upstream)
        }
        let intake = GatewayIntake(
            store: store, policy: configuration.policy, maxBodyBytes: configuration.maxBodyBytes,
            clock: environment.clock, metrics: metrics, logger: logger, telemetry: telemetry,
            admission: AppAdmission(clock: environment.clock),
            onAccepted: { [weak forwarder, policyCache] drafts in
                policyCache.noteTraffic(apps: drafts.map(\.app))
                forwarder?.announce(drafts)
            })
        let operations = OperationsEndpoints(
            store: store, forwarder: forwarder, metrics: metrics, logger: logger, clock: environment.clock,
            telemetry: telemetry, memoryBudget: server.memoryBudget, policy: { [intake] in intake.policy },
            dataDirectory: configuration.dataDirectory,
            requiredFreeBytes: configuration.maxBodyBytes)
        router.set(
            GatewayRouter(
                intake: intake, operations: operations,
                policy: PolicyEndpoint(cache: policyCache, policy: { [intake] in intake.policy }),
                status: StatusEndpoint(
                    operations: operations, telemetry: telemetry, policyCache: policyCache,
                    upstream: upstreamDescription
                ), telemetry: telemetry))
        forwarder?.start()
        let running = RunningGateway(
            server: server, store: store, intake: intake, forwarder: forwarder, metrics: metrics, logger: logger,
            configuration: configuration, clock: environment.clock, policyCache: policyCache, lock: lock,
            telemetry: telemetry)
        running.startPruning()
        running.startSummary()
        logger.info(
            "gateway listening",
            [
                "listen": "\(configuration.listenHost):\(httpPort)", "tls": configuration.tls == nil ? "off" : "on",
                "upstream": upstreamDescription, "dataDir": configuration.dataDirectory,
            ])
        return running
    }
}

/// The request handler of a bound server: 503 until the gateway's router is set (with the
/// request's id, like every answer).
///
/// The router is held in a box: every request takes it out of the lock, and that is then one
/// retain instead of a copy of the router (a retain and a release per endpoint).
private final class RouterSlot: Sendable {
    private final class Installed: Sendable {
        let router: GatewayRouter
        init(_ router: GatewayRouter) { self.router = router }
    }

    private let installed = Mutex<Installed?>(nil)
    private let retryAfterSeconds: Int
    private let requestIDs: RequestIDGenerator

    init(retryAfterSeconds: Int, random: RandomSource) {
        self.retryAfterSeconds = retryAfterSeconds
        requestIDs = RequestIDGenerator(seed: random)
    }

    func set(_ router: GatewayRouter) {
        installed.withLock { $0 = Installed(router) }
    }

    /// ``GatewayRouter/early(_:_:)`` once the router is set.
    func early(_ request: HTTPRequest, _ response: inout HTTPResponse) {
        guard let installed = installed.withLock({ $0 }) else {
            RequestID(request.headers, generator: requestIDs).stamp(&response)
            return
        }
        installed.router.early(request, &response)
    }

    /// ``GatewayRouter/dispatch(_:respond:)`` once the gateway runs; 503 while it starts.
    func dispatch(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        guard let installed = installed.withLock({ $0 }) else {
            var starting = GatewayIntake.errorResponse(
                IntakeRejection(
                    .serviceUnavailable, "the gateway is starting; retry later", retryAfterSeconds: retryAfterSeconds))
            RequestID(request.headers, generator: requestIDs).stamp(&starting)
            respond(starting)
            return
        }
        installed.router.dispatch(request, respond: respond)
    }
}

/// Injected dependencies: time, randomness, logs, and (for tests) the upstream connector.
package struct GatewayEnvironment: Sendable {
    /// The one clock: its wall time for dedup expiry, receive times and stored next-attempt
    /// times; its monotonic timeline for in-process scheduling — retry waits, the forwarder's
    /// scheduler tick, the connect-attempt window, idle connections and policy sessions (a
    /// wall-clock step moves none of them). Tests inject a manual clock and advance it.
    package var clock: PulseClock
    /// Jitter source for the backoff and request ids.
    package var random: RandomSource
    /// Where logs go.
    package var logger: GatewayLogger
    /// The build's version, for `pulsegate_build_info` and the status page.
    package var version: String
    var connector: (any UpstreamConnector)?

    /// Creates an environment; by default the system clock and generator and no logs.
    package init(
        clock: PulseClock = .system, random: RandomSource = .system,
        logger: GatewayLogger = .disabled, version: String = "unknown"
    ) {
        self.version = version
        self.clock = clock
        self.random = random
        self.logger = logger
    }
}

/// A started gateway.
package final class RunningGateway: Sendable {
    private let server: HTTPServer
    let store: any GatewayStoring
    let intake: GatewayIntake
    let forwarder: Forwarder?
    let policyCache: PolicyCache
    /// The gateway's counters.
    package let metrics: GatewayMetrics
    private let logger: GatewayLogger
    private let configuration: GatewayConfiguration
    private let clock: PulseClock
    private let pruning = Mutex<Task<Void, Never>?>(nil)
    private let summary = Mutex<Task<Void, Never>?>(nil)
    let telemetry: GatewayTelemetry
    private let stopped = Mutex<Bool>(false)
    private let lock: FileLock

    init(
        server: HTTPServer, store: any GatewayStoring, intake: GatewayIntake, forwarder: Forwarder?,
        metrics: GatewayMetrics,
        logger: GatewayLogger, configuration: GatewayConfiguration, clock: PulseClock, policyCache: PolicyCache,
        lock: FileLock, telemetry: GatewayTelemetry
    ) {
        self.telemetry = telemetry
        self.lock = lock
        self.policyCache = policyCache
        self.server = server
        self.store = store
        self.intake = intake
        self.forwarder = forwarder
        self.metrics = metrics
        self.logger = logger
        self.configuration = configuration
        self.clock = clock
    }

    /// The bound HTTP port.
    package var httpPort: Int { server.port ?? configuration.listenPort }

    /// The settings in force.
    package var policy: GatewayPolicy { intake.policy }

    /// Applies new run-time settings (SIGHUP): allowed apps, app keys, default app, retention,
    /// outbox caps, `Retry-After`, log level. Listen address, upstream and data directory need a restart.
    package func reload(_ policy: GatewayPolicy) throws(GatewayError) {
        try policy.validate()
        intake.policy = policy
        metrics.apps.configure(apps: policy.labelledApps)
        telemetry.configure(limits: GatewayTelemetry.limits(configuration, policy: policy))
        logger.level = policy.logLevel
        logger.info("configuration reloaded")
    }

    /// Reads the TLS certificate and key files again (SIGHUP) and serves them from the next TLS
    /// handshake on; connections already open keep theirs and are not closed. A pair that cannot
    /// be used leaves the previous one serving. Does nothing for a gateway without TLS.
    ///
    /// - Throws: ``GatewayError`` naming the file that cannot be used.
    package func reloadTLS() throws(GatewayError) {
        guard let files = configuration.tls else { return }
        let credentials = try files.load()
        do {
            try server.replaceTLSCredentials(credentials)
        } catch {
            throw GatewayError(.invalidConfiguration, "the TLS credentials could not be replaced", underlying: error)
        }
        logger.info("TLS certificate reloaded", ["cert": files.certificatePath])
    }

    /// The revision of the policy snapshot cached for `app` (0 when none is known): what
    /// `Apsio-Policy-Revision` says on the app's upload responses.
    package func policyRevision(app: String) -> Int64 {
        policyCache.revision(app: app)
    }

    /// Rows (Pulse batches) waiting in the outbox.
    package var outboxBatches: Int { store.outboxDepth.rows }

    /// Rescans the outbox and wakes the forwarder (after a requeue or a clock change in tests).
    package func pokeForwarder() {
        forwarder?.poke()
    }

    /// Deletes expired dedup keys now, in slices; returns how many were deleted.
    @discardableResult
    package func pruneExpiredKeys() async throws -> Int {
        var total = 0
        while true {
            let deleted = try await store.pruneExpired(
                now: clock.wallClockMilliseconds(), limit: configuration.pruneSliceSize)
            total += deleted
            if deleted < configuration.pruneSliceSize { break }
            await Task.yield()
        }
        if total > 0 { metrics.pruned(total) }
        return total
    }

    func startPruning() {
        let interval = configuration.pruneInterval
        let task = Task { [weak self] in
            while !Task.isCancelled {
                guard let clock = self?.clock else { return }
                try? await clock.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                do {
                    try await self.pruneExpiredKeys()
                } catch {
                    self.logger.error("dedup pruning failed", ["error": "\(error)"])
                }
            }
        }
        pruning.withLock { $0 = task }
    }

    /// Samples the counters for the status page's rates and writes the `traffic` summary line
    /// when it is due (``TrafficSummary``); `pulsegate serve` calls it about once a second.
    package func summaryTick() {
        telemetry.summary.tick()
    }

    func startSummary() {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                guard let clock = self?.clock else { return }
                try? await clock.sleep(for: .seconds(1))
                guard let self, !Task.isCancelled else { return }
                self.summaryTick()
            }
        }
        summary.withLock { $0 = task }
    }

    /// Drains and stops: new requests get 503, in-flight requests finish (up to the grace
    /// period), the forwarder stops after its requests in flight, the outbox is kept, the database
    /// closes and the data directory's lock is released. Calling it again returns at once.
    package func shutdown() async {
        let first = stopped.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        logger.info("shutting down: draining HTTP requests")
        intake.beginShutdown()
        await server.shutdown(gracePeriod: configuration.shutdownGracePeriod)
        pruning.withLock { $0 }?.cancel()
        summary.withLock { $0 }?.cancel()
        await forwarder?.stop()
        await policyCache.close()
        do {
            try await store.close()
        } catch {
            logger.error("closing the database failed", ["error": "\(error)"])
        }
        lock.release()
        logger.info("stopped", ["outbox": "kept"])
    }
}

extension GatewayApp {
    /// Sets glibc's allocator up for large, short-lived request buffers, once per process: a fixed
    /// 256 KiB mmap threshold (glibc's dynamic threshold would otherwise climb to 32 MiB after the
    /// first big free, keeping later bodies on the heap) and at most 4 arenas (per-thread arenas
    /// each keep their own free memory). Freed request memory then goes back to the system; the
    /// rest is returned by `malloc_trim` when a large request ends (``RequestMemoryBudget``).
    static func configureAllocator() {
        _ = allocatorConfigured
    }

    private static let allocatorConfigured: Bool = {
        pg_configure_allocator(4, 256 * 1024)
        return true
    }()
}
