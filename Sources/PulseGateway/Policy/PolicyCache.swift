import PulseClient
import PulseJSON
import PulseKit
import PulseProtocol
import Synchronization

/// The upstream's policy snapshot per app (CLIENT_CONFIG_PULL), in memory and persisted in the
/// gateway's database so a restart serves the last known policy at once.
///
/// When it pulls:
/// - a CONNECT or HEARTBEAT result of any upstream session of the app reports a revision newer
///   than the cached one (``observe(app:revision:session:)``);
/// - the upstream sends `config.invalidate` on one of the app's sessions;
/// - the upstream answers an upload with 409 (the forwarder asks, then retries once);
/// - `GET /v1/policy` finds nothing cached (``lookup(app:configured:)``): through an open session of
///   the app if there is one, else through a session of the gateway's own, opened for that app with
///   the identity of the last device forwarded for it or, without one, a gateway identity
///   (``gatewayIdentity(app:)``). Such a session is only opened for an app the gateway has had
///   traffic for (an accepted upload, a forwarder connection) or that its configuration names
///   (`defaultAppId`, `allowedAppIds`, `appKeys`); any other app is answered "no policy" at once,
///   so requests naming random App IDs open nothing. At most ``maxOwnedSessions`` are open (the
///   least recently asked closes first); one not asked for `forwarding.idleTimeout` closes
///   (``closeIdleSessions(olderThan:)``, on the injected monotonic clock). While open, heartbeats
///   keep the revision current.
///
/// Pulls of one app do not overlap: a trigger arriving during a pull runs one more pull after it.
/// A snapshot replaces the cached one when its revision is at least the cached revision; when the
/// upstream answers 409 to the cached revision (its revisions went back, e.g. after a restart
/// without persisted revisions) the gateway pulls with revision 0 and takes what it gets.
final class PolicyCache: Sendable {
    /// The answer to "what is app X's policy?".
    enum Lookup: Sendable, Equatable {
        case snapshot(ConfigSnapshot)
        /// The upstream defines no policy for the app (CONFIG_PULL 404/501, CONNECT refused 400/403/404).
        case noPolicy
        /// Nothing cached and the upstream cannot be asked now.
        case unavailable
    }

    /// Opens a gateway-owned session for an identity (nil: no upstream, nothing can be asked).
    typealias SessionFactory = @Sendable (ConnectRequest) -> PulseClientSession

    private struct Owned {
        var session: PulseClientSession
        var revisions: Task<Void, Never>
        /// When a lookup last used it (monotonic milliseconds).
        var lastUsed: Int64
    }

    private struct State {
        var snapshots: [String: ConfigSnapshot] = [:]
        /// Apps the upstream defines no policy for, until the given time (re-asked afterwards).
        var noPolicyUntil: [String: Int64] = [:]
        /// Open upstream sessions per app (forwarder sessions and owned ones).
        var sessions: [String: [ObjectIdentifier: WeakSession]] = [:]
        var identities: [String: ConnectRequest] = [:]
        /// Apps the intake accepted uploads for.
        var traffic: Set<String> = []
        var owned: [String: Owned] = [:]
        var pulling: Set<String> = []
        var pullAgain: Set<String> = []
        /// Callers waiting for the running pull of an app to finish.
        var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
        var closed = false
    }

    private struct WeakSession: @unchecked Sendable {
        weak var value: PulseClientSession?
    }

    private let store: (any GatewayStoring)?
    private let logger: GatewayLogger
    private let clock: PulseClock
    private let factory: SessionFactory?
    private let installationID: String
    private let state = Mutex(State())

    /// How long "no policy" is remembered before the upstream is asked again.
    static let noPolicyMemoryMilliseconds: Int64 = 30_000

    /// The most policy sessions of the gateway's own open at once.
    static let maxOwnedSessions = 32

    init(
        store: (any GatewayStoring)?, logger: GatewayLogger, clock: PulseClock,
        installationID: String, factory: SessionFactory?
    ) {
        self.store = store
        self.logger = logger
        self.clock = clock
        self.installationID = installationID
        self.factory = factory
    }

    /// Loads the snapshots persisted by an earlier run.
    func load() async {
        guard let store else { return }
        do {
            let rows = try await store.cachedPolicies()
            var loaded: [String: ConfigSnapshot] = [:]
            for (app, json) in rows {
                if let snapshot = try? ConfigSnapshot(decodingJSON: json) { loaded[app] = snapshot }
            }
            state.withLock { state in
                for (app, snapshot) in loaded where state.snapshots[app] == nil { state.snapshots[app] = snapshot }
            }
        } catch {
            logger.error("reading the policy cache failed", ["error": "\(error)"])
        }
    }

    // MARK: - Reading

    /// The cached snapshot of `app`.
    func snapshot(app: String) -> ConfigSnapshot? {
        state.withLock { $0.snapshots[app] }
    }

    /// The cached revision of `app`, 0 when none is known (the `Apsio-Policy-Revision` value).
    func revision(app: String) -> Int64 {
        state.withLock { $0.snapshots[app]?.revision ?? 0 }
    }

    /// The cached snapshot, or (nothing cached) the result of asking the upstream now. The upstream
    /// is asked only when the app has an open session, has had traffic, or is `configured`
    /// (named by the gateway's configuration); otherwise the answer is `noPolicy` at once.
    func lookup(app: String, configured: Bool) async -> Lookup {
        let now = clock.wallClockMilliseconds()
        let used = clock.monotonicMilliseconds()
        enum Step {
            case done(Lookup)
            case pull(PulseClientSession)
            case open(ConnectRequest)
        }
        let step = state.withLock { state -> Step in
            if let snapshot = state.snapshots[app] { return .done(.snapshot(snapshot)) }
            if let until = state.noPolicyUntil[app], until > now { return .done(.noPolicy) }
            if state.closed { return .done(.unavailable) }
            state.owned[app]?.lastUsed = used
            for entry in (state.sessions[app] ?? [:]).values {
                if let session = entry.value { return .pull(session) }
            }
            guard factory != nil else { return .done(.unavailable) }
            guard configured || state.traffic.contains(app) || state.identities[app] != nil else {
                return .done(.noPolicy)
            }
            return .open(state.identities[app] ?? gatewayIdentity(app: app))
        }
        switch step {
        case .done(let lookup):
            return lookup
        case .pull(let session):
            return await pull(app: app, session: session)
        case .open(let identity):
            guard let session = await openOwned(identity) else {
                return state.withLock { ($0.noPolicyUntil[app] ?? 0) > now ? .noPolicy : .unavailable }
            }
            return await pull(app: app, session: session)
        }
    }

    /// The identity of the gateway's own session for `app` when it has forwarded for no device of
    /// the app yet: device `pulsegate-gateway`, platform `linux`, device type `gateway`, no package.
    func gatewayIdentity(app: String) -> ConnectRequest {
        ConnectRequest(
            appId: app, deviceId: "pulsegate-gateway", installationId: installationID, platform: "linux",
            deviceType: "gateway", packageName: nil, appVersion: nil, sdkVersion: "pulsegate",
            capabilities: ResolvedIdentity.capabilities)
    }

    // MARK: - Sessions

    /// Registers an open session of `app`: its `config.invalidate` requests trigger a pull.
    func attach(_ session: PulseClientSession, app: String) {
        session.setControlHandler(.configInvalidate) { [weak self, weak session] _ in
            if let self, let session { self.schedulePull(app: app, session: session) }
            return .bool(true)
        }
        state.withLock { $0.sessions[app, default: [:]][ObjectIdentifier(session)] = WeakSession(value: session) }
    }

    /// Forgets a closed session.
    func detach(_ session: PulseClientSession, app: String) {
        session.setControlHandler(.configInvalidate, nil)
        state.withLock { state in
            state.sessions[app]?[ObjectIdentifier(session)] = nil
            if state.sessions[app]?.isEmpty == true { state.sessions[app] = nil }
        }
    }

    /// Remembers the identity of a device the gateway forwards for (used for an owned session).
    func remember(identity: ConnectRequest) {
        state.withLock { $0.identities[identity.appId] = identity }
    }

    /// Notes apps the intake accepted uploads for (their policy may be asked upstream).
    func noteTraffic(apps: some Sequence<String>) {
        state.withLock { state in
            for app in apps where !state.traffic.contains(app) { state.traffic.insert(app) }
        }
    }

    /// Closes the gateway's own sessions no lookup used for `idleMilliseconds` (monotonic).
    func closeIdleSessions(olderThan idleMilliseconds: Int64) async {
        let now = clock.monotonicMilliseconds()
        let idle = state.withLock { state -> [(String, Owned)] in
            let apps = state.owned.filter { entry in
                now - entry.value.lastUsed >= idleMilliseconds || now < entry.value.lastUsed
            }.map(\.key)
            return apps.compactMap { app in state.owned.removeValue(forKey: app).map { (app, $0) } }
        }
        for (app, entry) in idle { await closeOwned(entry, app: app) }
    }

    /// Open sessions of the gateway's own.
    var ownedSessionCount: Int { state.withLock { $0.owned.count } }

    private func closeOwned(_ entry: Owned, app: String) async {
        detach(entry.session, app: app)
        entry.revisions.cancel()
        await entry.session.close()
    }

    /// A revision from a CONNECT or HEARTBEAT result: pulls when it is newer than the cached one.
    func observe(app: String, revision: Int64, session: PulseClientSession) {
        let newer = state.withLock { revision > ($0.snapshots[app]?.revision ?? 0) }
        if newer { schedulePull(app: app, session: session) }
    }

    /// Pulls in the background (coalesced per app).
    func schedulePull(app: String, session: PulseClientSession) {
        Task { _ = await self.pull(app: app, session: session) }
    }

    /// Closes the gateway's own sessions.
    func close() async {
        let owned = state.withLock { state -> [Owned] in
            state.closed = true
            defer { state.owned = [:] }
            return Array(state.owned.values)
        }
        for entry in owned {
            await entry.session.close()
            entry.revisions.cancel()
        }
    }

    private func openOwned(_ identity: ConnectRequest) async -> PulseClientSession? {
        guard let factory else { return nil }
        let app = identity.appId
        if let existing = state.withLock({ $0.owned[app]?.session }) { return existing }
        // Make room first, so the upstream never sees more than the cap from here.
        let full = state.withLock { state -> (String, Owned)? in
            guard state.owned.count >= Self.maxOwnedSessions,
                let oldest = state.owned.min(by: { $0.value.lastUsed < $1.value.lastUsed })
            else { return nil }
            state.owned[oldest.key] = nil
            return (oldest.key, oldest.value)
        }
        if let (evictedApp, entry) = full { await closeOwned(entry, app: evictedApp) }
        let session = factory(identity)
        do {
            try await session.connect()
        } catch {
            await session.close()
            if error.code == .connectRejected, let code = error.responseCode, [400, 403, 404].contains(code) {
                logger.warning("upstream refused the policy session", ["app": app, "code": String(code)])
                let until = clock.wallClockMilliseconds() + Self.noPolicyMemoryMilliseconds
                state.withLock { $0.noPolicyUntil[app] = until }
            } else {
                logger.warning("cannot reach the upstream for the policy", ["app": app, "error": error.message])
            }
            return nil
        }
        attach(session, app: app)
        let updates = session.configRevisionUpdates()
        let revisions = Task { [weak self, weak session] in
            for await revision in updates {
                guard let self, let session else { return }
                self.observe(app: app, revision: revision, session: session)
            }
        }
        let now = clock.monotonicMilliseconds()
        let (kept, evicted) = state.withLock { state -> (PulseClientSession?, (String, Owned)?) in
            if state.closed { return (nil, nil) }
            if let other = state.owned[app] { return (other.session, nil) }
            var evicted: (String, Owned)?
            if state.owned.count >= Self.maxOwnedSessions,
                let oldest = state.owned.min(by: { $0.value.lastUsed < $1.value.lastUsed })
            {
                state.owned[oldest.key] = nil
                evicted = (oldest.key, oldest.value)
            }
            state.owned[app] = Owned(session: session, revisions: revisions, lastUsed: now)
            return (session, evicted)
        }
        if let (evictedApp, entry) = evicted { await closeOwned(entry, app: evictedApp) }
        if kept !== session {
            detach(session, app: app)
            revisions.cancel()
            await session.close()
        }
        return kept
    }

    // MARK: - Pulling

    /// Pulls `app`'s snapshot through `session` and caches it; returns what is cached afterwards.
    func pull(app: String, session: PulseClientSession) async -> Lookup {
        let first = state.withLock { state -> Bool in
            if state.pulling.contains(app) {
                state.pullAgain.insert(app)
                return false
            }
            state.pulling.insert(app)
            return true
        }
        guard first else { return await waitForPull(app: app) }
        var result: Lookup
        repeat {
            result = await pullOnce(app: app, session: session)
        } while state.withLock({ $0.pullAgain.remove(app) != nil })
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.pulling.remove(app)
            return state.waiters.removeValue(forKey: app) ?? []
        }
        for waiter in waiters { waiter.resume() }
        return result
    }

    /// Another pull of `app` is running: wait for it (each pull is bounded by the request timeout)
    /// and report what is cached then.
    private func waitForPull(app: String) async -> Lookup {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let running = state.withLock { state -> Bool in
                guard state.pulling.contains(app) else { return false }
                state.waiters[app, default: []].append(continuation)
                return true
            }
            if !running { continuation.resume() }
        }
        return cached(app: app)
    }

    private func cached(app: String) -> Lookup {
        let now = clock.wallClockMilliseconds()
        return state.withLock { state in
            if let snapshot = state.snapshots[app] { return .snapshot(snapshot) }
            if let until = state.noPolicyUntil[app], until > now { return .noPolicy }
            return .unavailable
        }
    }

    private func pullOnce(app: String, session: PulseClientSession) async -> Lookup {
        let current = revision(app: app)
        var outcome: PulseConfigPullOutcome
        var fromZero = current == 0
        do {
            outcome = try await session.pullConfig(currentRevision: current)
            if case .rejected(let response) = outcome, response.code == PulseResponseCode.conflict.rawValue,
                current > 0
            {
                fromZero = true
                outcome = try await session.pullConfig(currentRevision: 0)
            }
        } catch {
            logger.warning("CLIENT_CONFIG_PULL failed", ["app": app, "error": error.message])
            return cached(app: app)
        }
        switch outcome {
        case .snapshot(let snapshot):
            await keep(snapshot, app: app, force: fromZero)
        case .rejected(let response):
            if response.code == PulseResponseCode.notFound.rawValue
                || response.code == PulseResponseCode.notImplemented.rawValue
            {
                let until = clock.wallClockMilliseconds() + Self.noPolicyMemoryMilliseconds
                state.withLock { $0.noPolicyUntil[app] = until }
            }
            logger.warning(
                "upstream refused CLIENT_CONFIG_PULL", ["app": app, "code": String(response.code)])
        }
        return cached(app: app)
    }

    private func keep(_ snapshot: ConfigSnapshot, app: String, force: Bool) async {
        let changed = state.withLock { state -> Bool in
            let current = state.snapshots[app]
            guard current != snapshot else { return false }
            guard force || snapshot.revision >= (current?.revision ?? 0) else { return false }
            state.snapshots[app] = snapshot
            state.noPolicyUntil[app] = nil
            return true
        }
        guard changed else { return }
        logger.info("policy updated", ["app": app, "revision": String(snapshot.revision)])
        do {
            try await store?.savePolicy(
                app: app, revision: snapshot.revision, json: snapshot.encodeJSON(), now: clock.wallClockMilliseconds())
        } catch {
            logger.error("persisting the policy failed", ["app": app, "error": "\(error)"])
        }
    }
}
