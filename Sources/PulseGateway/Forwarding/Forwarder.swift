import MsgTrans
import MsgTransRuntime
import PulseHashing
import PulseProtocol
import Synchronization

/// Drains the outbox upstream: strict FIFO per identity (crash batches first), parallel across
/// identities, at most ``ForwardingSettings/maxInFlight`` requests at once.
///
/// What each upstream answer does to the head row:
///
/// | answer | action |
/// | --- | --- |
/// | code 0 with `data: true` | delete the row |
/// | code 0 without `data: true` | retry with backoff (nothing confirmed acceptance) |
/// | 401 | the Pulse client session re-registers and retries at once; a second 401 → backoff, and the connection is dropped so the next attempt registers again (new connection, CLIENT_CONNECT) |
/// | 400, 403, 404 | move to the dead-letter table |
/// | 409 | CLIENT_CONFIG_PULL (into the policy cache), then retry once; a second 409 → dead letter |
/// | 429, 500, 503, other 5xx, timeout, disconnect | retry with backoff |
/// | 501 to a crash batch | replace the row by `Crash` events in event batches (sent next) |
/// | 501 to an event batch ("do not retry until the peer changes"), other codes | dead letter (code and message kept, a warning logged) |
///
/// Backoff is exponential with full jitter: the delay is uniform in `0 ... min(backoffMax,
/// backoffBase × 2^attempts)`, drawn from the injected random source. The process waits it out on
/// the injected *monotonic* clock; the row's `next_attempt_at` keeps it in wall-clock time so it
/// survives restarts. A stored time further ahead than `backoffMax` can only come from a wall
/// clock that stepped back (or a foreign writer): it is treated as due now.
///
/// New connections (TCP connect plus CLIENT_CONNECT) are capped per identity and overall within a
/// sliding window (``ForwardingSettings/connectWindow``); an identity over its cap waits for its
/// oldest attempt to leave the window, its rows untouched.
final class Forwarder: Sendable {
    private let store: any GatewayStoring
    private let pool: UpstreamPool
    private let settings: ForwardingSettings
    private let clock: GatewayClock
    private let monotonic: GatewayClock
    private let policy: PolicyCache?
    private let random: GatewayRandom
    private let metrics: GatewayMetrics
    private let logger: GatewayLogger
    private let limiter: AsyncLimiter
    private let wake = WakeSignal()
    private let state = Mutex(State())

    private struct IdentityState {
        var app: String
        var connectPayload: [UInt8]
        /// A worker is draining this identity.
        var active = false
        /// Do not start a worker before this monotonic time (backoff of the head row).
        var notBefore: Int64 = 0
        /// The connect-attempt window refused this identity until this monotonic time (a rescan
        /// does not make it due earlier).
        var throttledUntil: Int64 = 0
        /// In ``State/ready``.
        var queued = false
        /// Rows were announced while a worker was draining: it must not forget the identity when
        /// its last read came back empty (the read may have preceded their commit).
        var announcedWhileActive = false
    }

    private struct State {
        var identities: [String: IdentityState] = [:]
        /// Idle identities that are due, in the order they became due: the scheduler starts
        /// workers from here instead of scanning every identity on every wake.
        var ready = FIFO<String>()
        /// Idle identities waiting for their `notBefore`, earliest first (entries go stale when
        /// the identity changes; they are checked when they come due).
        var waiting = DeadlineHeap()
        var activeWorkers = 0
        /// Identities the scheduler looked at when starting workers (for tests: it grows with the
        /// identities that came due, not with all identities known).
        var schedulerVisits = 0
        var stopping = false
        var scheduler: Task<Void, Never>?
        var workers: [String: Task<Void, Never>] = [:]
        var lastRescan: Int64?
        /// Set when the upstream answered: the last outcome, for readiness.
        var upstreamReachable = true
    }

    init(
        store: any GatewayStoring, connector: any UpstreamConnector, settings: ForwardingSettings, clock: GatewayClock,
        monotonic: GatewayClock, random: GatewayRandom, metrics: GatewayMetrics, logger: GatewayLogger,
        policy: PolicyCache? = nil
    ) {
        self.store = store
        self.settings = settings
        self.clock = clock
        self.monotonic = monotonic
        self.policy = policy
        self.random = random
        self.metrics = metrics
        self.logger = logger
        self.pool = UpstreamPool(
            connector: connector, capacity: settings.maxConnections, clock: monotonic, policy: policy,
            window: ConnectWindow(
                window: Self.milliseconds(settings.connectWindow), perIdentity: settings.maxConnectsPerIdentity,
                overall: settings.maxConnectsPerWindow))
        self.limiter = AsyncLimiter(settings.maxInFlight)
    }

    /// Identities the scheduler has looked at so far (see ``State/schedulerVisits``).
    var schedulerVisits: Int { state.withLock { $0.schedulerVisits } }

    /// Open upstream connections.
    var openConnections: Int { pool.openCount }

    /// Whether the last upstream exchange got an answer (or nothing was tried yet).
    var upstreamReachable: Bool { state.withLock { $0.upstreamReachable } }

    /// Starts the scheduler (it scans the outbox for rows left by an earlier run first).
    func start() {
        let task = Task { await self.schedule() }
        state.withLock { $0.scheduler = task }
    }

    /// Stops sending: waits for requests in flight, keeps every unsent row, closes connections.
    func stop() async {
        let (scheduler, workers) = state.withLock { state -> (Task<Void, Never>?, [Task<Void, Never>]) in
            state.stopping = true
            return (state.scheduler, Array(state.workers.values))
        }
        wake.signal()
        await scheduler?.value
        for worker in workers { await worker.value }
        await pool.closeAll()
    }

    /// Announces new outbox rows (called by the intake after a commit).
    func announce(_ drafts: [OutboxDraft]) {
        let now = monotonic.now()
        let horizon = horizonMilliseconds
        state.withLock { state in
            for draft in drafts {
                if state.identities[draft.identityKey] == nil {
                    state.identities[draft.identityKey] = IdentityState(app: draft.app, connectPayload: draft.identity)
                } else if state.identities[draft.identityKey]?.active == true {
                    state.identities[draft.identityKey]?.announcedWhileActive = true
                }
                Self.enqueue(draft.identityKey, in: &state, now: now, horizon: horizon)
            }
        }
        wake.signal()
    }

    /// Rescans the outbox at once (after `pulsegate outbox requeue` or in tests) and wakes workers
    /// whose backoff has passed on the injected monotonic clock.
    func poke() {
        state.withLock { $0.lastRescan = nil }
        wake.signal()
    }

    // MARK: - Scheduling

    private func schedule() async {
        let rescanMilliseconds = Self.milliseconds(settings.rescanInterval)
        let idleMilliseconds = Self.milliseconds(settings.idleTimeout)
        while true {
            let now = monotonic.now()
            let (stopping, rescanDue) = state.withLock { state in
                (state.stopping, state.lastRescan.map { now &- $0 >= rescanMilliseconds || now < $0 } ?? true)
            }
            if stopping { return }
            if rescanDue { await rescan(now: now) }
            await pool.closeIdle(olderThan: idleMilliseconds)
            await policy?.closeIdleSessions(olderThan: idleMilliseconds)
            startDueWorkers(now: monotonic.now())
            await wake.wait(upTo: .milliseconds(250))
        }
    }

    private func rescan(now: Int64) async {
        do {
            try await store.refreshDepth()
            let pending = try await store.pendingIdentities()
            let horizon = horizonMilliseconds
            state.withLock { state in
                state.lastRescan = now
                // Rebuilt from the outbox: drops stale entries, and a wait that a clock step
                // made too long is found here.
                state.waiting = DeadlineHeap()
                // Idle identities without rows are forgotten (a worker would find nothing).
                let keys = Set(pending.map(\.identityKey))
                state.identities = state.identities.filter {
                    $0.value.active || $0.value.queued || keys.contains($0.key)
                }
                for identity in pending {
                    let notBefore = dueTime(storedAt: identity.nextAttemptAt)
                    if var known = state.identities[identity.identityKey] {
                        if !known.active { known.notBefore = max(notBefore, known.throttledUntil) }
                        state.identities[identity.identityKey] = known
                    } else {
                        state.identities[identity.identityKey] = IdentityState(
                            app: identity.app, connectPayload: identity.identity, notBefore: notBefore)
                    }
                    Self.enqueue(identity.identityKey, in: &state, now: now, horizon: horizon)
                }
            }
        } catch {
            logger.error("outbox scan failed", ["error": "\(error)"])
        }
    }

    /// How soon an identity whose lease another node holds is tried again (fleet mode): its
    /// holder usually drains rows committed here too; this bounds the wait when it stopped just
    /// before they were committed.
    private var leaseRetryMilliseconds: Int64 {
        max(100, min(Self.milliseconds(settings.rescanInterval), 2_000))
    }

    /// No wait the forwarder sets lies further ahead than this (the longest backoff or connect
    /// window, plus slack); a later `notBefore` means the monotonic clock itself went back (a
    /// faked clock), and the identity is due now.
    private var horizonMilliseconds: Int64 {
        max(Self.milliseconds(settings.backoffMax), Self.milliseconds(settings.connectWindow)) * 2 + 1000
    }

    /// Puts an idle identity in the ready queue when it is due (or its wait lies beyond the
    /// horizon), else in the waiting heap. Does nothing for an active or already queued identity.
    private static func enqueue(_ key: String, in state: inout State, now: Int64, horizon: Int64) {
        guard let identity = state.identities[key], !identity.active, !identity.queued else { return }
        if identity.notBefore <= now || identity.notBefore - now > horizon {
            state.identities[key]?.queued = true
            state.ready.append(key)
        } else {
            state.waiting.push(identity.notBefore, key)
        }
    }

    /// Starts workers for ready identities (moving those whose wait is over from the heap first),
    /// at most `maxConnections` at once. Costs the identities that are due, not all identities.
    private func startDueWorkers(now: Int64) {
        let horizon = horizonMilliseconds
        state.withLock { state in
            guard !state.stopping else { return }
            while let (deadline, key) = state.waiting.popDue(now: now) {
                state.schedulerVisits += 1
                // A stale entry: the identity now waits for a later time (it has a newer entry).
                if let identity = state.identities[key], identity.notBefore > deadline, identity.notBefore > now {
                    continue
                }
                Self.enqueue(key, in: &state, now: now, horizon: horizon)
            }
            while state.activeWorkers < settings.maxConnections, let key = state.ready.popFirst() {
                state.schedulerVisits += 1
                guard var identity = state.identities[key] else { continue }
                identity.queued = false
                guard !identity.active else {
                    state.identities[key] = identity
                    continue
                }
                identity.active = true
                state.identities[key] = identity
                state.activeWorkers += 1
                let payload = identity.connectPayload
                state.workers[key] = Task { await self.drain(key: key, connectPayload: payload) }
            }
        }
    }

    /// Sends an identity's rows in order until its queue is empty, a row must wait, or stopping.
    private func drain(key: String, connectPayload: [UInt8]) async {
        var notBefore: Int64 = 0
        var forget = false
        defer {
            let now = monotonic.now()
            let horizon = horizonMilliseconds
            state.withLock { state in
                state.activeWorkers -= 1
                state.workers[key] = nil
                let announced = state.identities[key]?.announcedWhileActive ?? false
                state.identities[key]?.announcedWhileActive = false
                if forget && !announced {
                    state.identities[key] = nil
                } else {
                    state.identities[key]?.active = false
                    state.identities[key]?.notBefore = notBefore
                    Self.enqueue(key, in: &state, now: now, horizon: horizon)
                }
            }
            pool.release(key)
            store.releaseLease(identityKey: key)
            wake.signal()
        }
        // Fleet mode: one node at a time sends an identity's rows (FIFO across the fleet).
        guard await store.acquireLease(identityKey: key) else {
            notBefore = monotonic.now() + leaseRetryMilliseconds
            return
        }
        while !state.withLock({ $0.stopping }) {
            // A lease that was not renewed in time may be another node's now: stop sending.
            guard store.holdsLease(identityKey: key) else {
                notBefore = monotonic.now() + leaseRetryMilliseconds
                return
            }
            let rows: [OutboxRow]
            do {
                rows = try await store.nextRows(identityKey: key, limit: settings.forwardWindow)
            } catch {
                logger.error("outbox read failed", ["error": "\(error)"])
                notBefore = monotonic.now() + 1000
                return
            }
            guard let row = rows.first else {
                forget = true
                return
            }
            let due = dueTime(storedAt: row.nextAttemptAt)
            if due > monotonic.now() {
                notBefore = due
                return
            }
            let window = Self.window(rows, isDue: { self.dueTime(storedAt: $0.nextAttemptAt) <= self.monotonic.now() })
            let retryAt =
                window.count > 1
                ? await deliver(window: window, key: key, connectPayload: connectPayload)
                : await deliver(row, key: key, connectPayload: connectPayload)
            if let retryAt {
                notBefore = retryAt
                return
            }
        }
    }

    // MARK: - Window

    /// The rows sent together: the head and the due event rows right behind it that never failed,
    /// at most ``ForwardingSettings/forwardWindow`` (what was read). A head that failed before
    /// (`attempts > 0`), a crash batch or a crash-priority row (the `Crash` events that replaced a
    /// crash batch after a 501) is sent alone, with the single-row handling (the
    /// session's re-register on 401, the config pull on 409, the crash fallback on 501); the window
    /// opens again once it is delivered.
    static func window(_ rows: [OutboxRow], isDue: (OutboxRow) -> Bool) -> [OutboxRow] {
        func windowed(_ row: OutboxRow) -> Bool { row.attempts == 0 && row.kind == .events && row.priority > 0 }
        guard let head = rows.first, windowed(head) else { return Array(rows.prefix(1)) }
        return Array(rows.prefix { windowed($0) && isDue($0) })
    }

    /// What became of one row of a window.
    private enum WindowOutcome: Sendable {
        /// Answered `{"code":0,"data":true}`: delete it.
        case accepted
        /// Not sent: an older row of the window had failed first. Untouched.
        case notSent
        /// Failed (rescheduled) or refused for good (dead-lettered); the identity's next wake.
        case failed(wakeAt: Int64)
        /// Dead-lettered: it left the outbox, nothing newer waits for it.
        case settled
    }

    /// Sends a window of event rows on one connection: in FIFO order (a row is handed to the
    /// connection only after the row before it was), up to the window in flight at once. The
    /// first row that fails stops the window: no row behind it is sent (rows already in flight
    /// finish). A failed row is rescheduled (backoff; a 401 or 409 is due at once, to be resent
    /// alone with its single-row handling) and, having `attempts > 0`, is sent alone before any
    /// newer row. Accepted rows are deleted together in one group-commit job.
    private func deliver(window rows: [OutboxRow], key: String, connectPayload: [UInt8]) async -> Int64? {
        let session: any UpstreamSession
        switch await openSession(for: rows[0], key: key, connectPayload: connectPayload) {
        case .ready(let ready): session = ready
        case .settled(let retryAt): return retryAt
        }
        let sequencer = WindowSequencer()
        let outcomes = await withTaskGroup(of: (Int, WindowOutcome).self) { group in
            for (index, row) in rows.enumerated() {
                group.addTask {
                    await sequencer.waitForTurn(index)
                    guard !sequencer.isStopped else {
                        sequencer.handedOver(index)
                        return (index, .notSent)
                    }
                    let outcome = await self.send(row, index: index, on: session, key: key, sequencer: sequencer)
                    sequencer.handedOver(index)
                    if case .failed = outcome { sequencer.stop() }
                    return (index, outcome)
                }
            }
            var outcomes: [(Int, WindowOutcome)] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes.sorted { $0.0 < $1.0 }.map(\.1)
        }
        if sequencer.lostConnection { await pool.discard(key) }
        let accepted = zip(rows, outcomes).filter { if case .accepted = $0.1 { true } else { false } }.map(\.0)
        if !accepted.isEmpty {
            do {
                try await store.delete(seqs: accepted.map(\.seq))
                for row in accepted { metrics.forwarded(kind: row.kind, result: "ok") }
            } catch {
                logger.error("outbox delete failed", ["rows": String(accepted.count), "error": "\(error)"])
                return monotonic.now() + 1000
            }
        }
        let wakes = outcomes.compactMap { outcome -> Int64? in
            if case .failed(let wakeAt) = outcome { wakeAt } else { nil }
        }
        return wakes.min()
    }

    /// Sends one row of a window and applies every outcome but acceptance (deleted in a batch).
    private func send(
        _ row: OutboxRow, index: Int, on session: any UpstreamSession, key: String, sequencer: WindowSequencer
    ) async -> WindowOutcome {
        await limiter.acquire()
        defer { limiter.release() }
        let started = ContinuousClock.now
        let reply: UpstreamReply
        do {
            reply = try await session.request(
                .clientEventBatchUpload, wirePayload: row.payload,
                compression: Compression(rawValue: row.compression) ?? .none, retryingUnauthorized: false,
                onSubmitted: { sequencer.handedOver(index) })
        } catch {
            markReachable(false)
            sequencer.connectionLost()
            return .failed(wakeAt: await retryLater(row, reason: error.message))
        }
        markReachable(true)
        let elapsed = ContinuousClock.now - started
        metrics.forwardLatency(
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        if reply.confirmsAcceptance { return .accepted }
        let message = reply.message ?? ""
        switch reply.code {
        case 401, 409:
            // Resent at once, alone, where the single-row handling re-registers or pulls the config.
            return .failed(wakeAt: await retryLater(row, reason: "code \(reply.code): \(message)", immediately: true))
        case 0:
            return .failed(wakeAt: await retryLater(row, reason: "code 0 without data true"))
        case 429, 500, 502...599:
            return .failed(wakeAt: await retryLater(row, reason: "code \(reply.code): \(message)"))
        default:
            // 400, 403, 404, 501 to an event batch and unknown codes: refused for good.
            if let retryAt = await deadLetter(row, code: reply.code, message: message) {
                return .failed(wakeAt: retryAt)
            }
            return .settled
        }
    }

    // MARK: - Delivery

    private enum SessionStep {
        case ready(any UpstreamSession)
        /// No session: the head row was rescheduled, dead-lettered or throttled; when to go on.
        case settled(Int64?)
    }

    /// The identity's session, or what became of `row` when none can be had.
    private func openSession(for row: OutboxRow, key: String, connectPayload: [UInt8]) async -> SessionStep {
        do {
            return .ready(try await pool.acquire(key: key, connectPayload: connectPayload))
        } catch {
            switch error.kind {
            case .throttled(let until):
                logger.debug("connect attempts capped; waiting", ["seq": String(row.seq)])
                // Jitter, so identities capped together do not come back in lock step.
                let jitter = Int64(random.unit() * Double(Self.milliseconds(settings.backoffBase)))
                let wakeAt = max(until, monotonic.now() + 1) + jitter
                state.withLock { $0.identities[key]?.throttledUntil = wakeAt }
                return .settled(wakeAt)
            case .transport:
                markReachable(false)
                return .settled(await retryLater(row, reason: error.message))
            case .connectRejected(let code):
                markReachable(true)
                if code == 400 || code == 403 || code == 404 {
                    return .settled(await deadLetter(row, code: code, message: error.message))
                }
                return .settled(await retryLater(row, reason: error.message))
            }
        }
    }

    /// Sends one row and applies the outcome; returns when to retry the identity, or `nil` to go on.
    private func deliver(_ row: OutboxRow, key: String, connectPayload: [UInt8]) async -> Int64? {
        await limiter.acquire()
        defer { limiter.release() }
        var pulledConfig = false
        while true {
            let session: any UpstreamSession
            switch await self.openSession(for: row, key: key, connectPayload: connectPayload) {
            case .ready(let ready): session = ready
            case .settled(let retryAt): return retryAt
            }
            if row.kind == .crashes && session.lacksCrashUpload {
                return await fallBack(row, connectPayload: connectPayload, reason: "upstream lacks crash upload")
            }
            let operation: PulseBizType = row.kind == .crashes ? .clientCrashBatchUpload : .clientEventBatchUpload
            let started = ContinuousClock.now
            let reply: UpstreamReply
            do {
                reply = try await session.request(
                    operation, wirePayload: row.payload, compression: Compression(rawValue: row.compression) ?? .none,
                    retryingUnauthorized: true, onSubmitted: nil)
            } catch {
                markReachable(false)
                await pool.discard(key)
                return await retryLater(row, reason: error.message)
            }
            markReachable(true)
            let elapsed = ContinuousClock.now - started
            metrics.forwardLatency(
                seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            if reply.confirmsAcceptance {
                do {
                    try await store.delete(seq: row.seq)
                    metrics.forwarded(kind: row.kind, result: "ok")
                    return nil
                } catch {
                    logger.error("outbox delete failed", ["seq": String(row.seq), "error": "\(error)"])
                    return monotonic.now() + 1000
                }
            }
            let message = reply.message ?? ""
            switch reply.code {
            case 0:
                return await retryLater(row, reason: "code 0 without data true")
            case 409 where !pulledConfig:
                pulledConfig = true
                await session.pullConfig()
                continue
            case 400, 403, 404, 409:
                return await deadLetter(row, code: reply.code, message: message)
            case 501 where row.kind == .crashes:
                session.lacksCrashUpload = true
                return await fallBack(
                    row, connectPayload: connectPayload, reason: "upstream answered 501 to crash upload")
            case 501:
                return await deadLetter(row, code: reply.code, message: message)
            case 401:
                // The session already registered again once; the connection the upstream refused
                // twice is not reused: the next attempt opens a new one with CLIENT_CONNECT.
                await pool.discard(key)
                return await retryLater(row, reason: "code \(reply.code): \(message)")
            case 429, 500...599:
                return await retryLater(row, reason: "code \(reply.code): \(message)")
            default:
                return await deadLetter(row, code: reply.code, message: message)
            }
        }
    }

    private func markReachable(_ reachable: Bool) {
        state.withLock { $0.upstreamReachable = reachable }
    }

    /// The full-jitter backoff delay for a row that failed `attempts` times before.
    func backoffMilliseconds(attempts: Int) -> Int64 {
        let base = Double(Self.milliseconds(settings.backoffBase))
        let cap = Double(Self.milliseconds(settings.backoffMax))
        let ceiling = min(cap, base * Double(1 << min(attempts, 30)))
        return Int64(random.unit() * ceiling)
    }

    /// The monotonic time a stored (wall-clock) `next_attempt_at` falls due: as far ahead as it is
    /// of the wall clock now, but a time further ahead than `backoffMax` (a wall clock that stepped
    /// back) is due now.
    private func dueTime(storedAt nextAttemptAt: Int64) -> Int64 {
        let ahead = nextAttemptAt - clock.now()
        let now = monotonic.now()
        guard ahead > 0, ahead <= Self.milliseconds(settings.backoffMax) else { return now }
        return now + ahead
    }

    private func retryLater(_ row: OutboxRow, reason: String, immediately: Bool = false) async -> Int64 {
        let delay = immediately ? 0 : max(1, backoffMilliseconds(attempts: row.attempts))
        let retryAt = clock.now() + delay
        let wakeAt = monotonic.now() + delay
        metrics.forwarded(kind: row.kind, result: "retry")
        logger.debug(
            "upstream send failed, will retry",
            ["seq": String(row.seq), "attempts": String(row.attempts + 1), "reason": reason])
        do {
            try await store.reschedule(seq: row.seq, nextAttemptAt: retryAt, error: reason)
        } catch {
            logger.error("outbox reschedule failed", ["seq": String(row.seq), "error": "\(error)"])
        }
        return wakeAt
    }

    private func deadLetter(_ row: OutboxRow, code: Int, message: String) async -> Int64? {
        metrics.forwarded(kind: row.kind, result: "dead_letter")
        logger.warning(
            "upstream refused a batch; moved to dead letters",
            ["app": row.app, "seq": String(row.seq), "pulseBatchId": row.pulseBatchID, "code": String(code)])
        do {
            try await store.deadLetter(seq: row.seq, code: code, message: message, now: clock.now())
            return nil
        } catch {
            logger.error("dead-letter move failed", ["seq": String(row.seq), "error": "\(error)"])
            return monotonic.now() + 1000
        }
    }

    /// Replaces a crash row by `Crash` events in event batches, sent next.
    private func fallBack(_ row: OutboxRow, connectPayload: [UInt8], reason: String) async -> Int64? {
        metrics.forwarded(kind: row.kind, result: "fallback")
        let drafts = CrashFallback.eventDrafts(for: row, connectPayload: connectPayload)
        logger.info(
            "sending crash reports as Crash events",
            ["seq": String(row.seq), "reason": reason, "batches": String(drafts.count)])
        do {
            try await store.replaceWithFallback(
                seq: row.seq, httpBatchID: row.httpBatchID, drafts: drafts, now: clock.now())
            return nil
        } catch {
            logger.error("crash fallback failed", ["seq": String(row.seq), "error": "\(error)"])
            return monotonic.now() + 1000
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let parts = duration.components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }
}

/// Turns a crash row into event rows carrying the same records as `Crash` events.
enum CrashFallback {
    /// `connectPayload` is the row's identity as CONNECT sends it (the `identities` row).
    static func eventDrafts(for row: OutboxRow, connectPayload: [UInt8]) -> [OutboxDraft] {
        guard let blob = row.fallback, let events = EventChunks.split(blob),
            let plaintext = try? row.storedPayload.plaintext(), let identity = identityJSON(plaintext)
        else { return [] }
        let (batches, _) = BatchSplitter.events.split(identity: identity, items: events) { chunk in
            var hasher = SHA256()
            hasher.updateField(row.pulseBatchID)
            hasher.updateField("fallback")
            hasher.updateField(String(chunk))
            return String(Hex.encode(hasher.finalize()).prefix(BatchSplitter.batchIDLength))
        }
        return batches.map { batch in
            OutboxDraft(
                app: row.app, identityKey: row.identityKey, identity: connectPayload, kind: .events,
                pulseBatchID: batch.batchID, payload: batch.payload,
                compression: StoredPayload.compression(forPlaintextOf: batch.payload.count).rawValue,
                recordCount: batch.count, fallback: nil)
        }
    }

    /// The `identity` object of a crash batch the gateway wrote: the bytes between
    /// `{"identity":` and `,"crashes":[` (a quote inside a JSON string is always escaped, so the
    /// marker cannot occur inside the identity).
    static func identityJSON(_ payload: [UInt8]) -> [UInt8]? {
        let prefix = Array("{\"identity\":".utf8)
        let marker = Array(",\"crashes\":[".utf8)
        guard payload.starts(with: prefix) else { return nil }
        var index = prefix.count
        while index + marker.count <= payload.count {
            if payload[index] == marker[0] && Array(payload[index..<index + marker.count]) == marker {
                return Array(payload[prefix.count..<index])
            }
            index += 1
        }
        return nil
    }
}

/// Hands a window's rows to the connection one after another: row `i` may be sent once row
/// `i - 1` was handed over (or finished without being sent), so the rows reach the wire in FIFO
/// order. Once stopped (a row failed), rows not yet handed over are not sent.
final class WindowSequencer: Sendable {
    private struct State {
        /// Rows `0..<next` were handed over.
        var next = 0
        var stopped = false
        var lostConnection = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    var isStopped: Bool { state.withLock { $0.stopped } }
    /// Whether a request of the window failed without an answer (its connection is not reused).
    var lostConnection: Bool { state.withLock { $0.lostConnection } }

    /// Waits until every row before `index` was handed over.
    func waitForTurn(_ index: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.next >= index { return true }
                state.waiters[index] = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Row `index` was handed over (or will not be): the next row may go. Idempotent.
    func handedOver(_ index: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.next == index else { return nil }
            state.next = index + 1
            return state.waiters.removeValue(forKey: index + 1)
        }
        waiter?.resume()
    }

    func stop() {
        state.withLock { $0.stopped = true }
    }

    func connectionLost() {
        state.withLock {
            $0.lostConnection = true
            $0.stopped = true
        }
    }
}

/// A binary min-heap of (deadline, identity key).
struct DeadlineHeap {
    private var entries: [(deadline: Int64, key: String)] = []

    var count: Int { entries.count }

    mutating func push(_ deadline: Int64, _ key: String) {
        entries.append((deadline, key))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if its deadline is at most `now`.
    mutating func popDue(now: Int64) -> (Int64, String)? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < entries.count && entries[left].deadline < entries[smallest].deadline { smallest = left }
                if right < entries.count && entries[right].deadline < entries[smallest].deadline { smallest = right }
                if smallest == parent { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return (first.deadline, first.key)
    }
}
