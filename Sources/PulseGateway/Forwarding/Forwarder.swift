import MsgTrans
import MsgTransRuntime
import PulseHashing
import PulseKit
import PulseProtocol
import Synchronization

/// Drains the outbox upstream: FIFO per identity (crash batches first) with a sliding window of
/// up to ``ForwardingSettings/forwardWindow`` requests in flight on the identity's connection (see
/// `slide` and ``WindowPump``), parallel across identities, at most
/// ``ForwardingSettings/maxInFlight`` requests at once.
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
/// Backoff is PulseKit's `Backoff` (full jitter): the delay is uniform in `0 ... min(backoffMax,
/// backoffBase × 2^attempts)`, drawn from the injected random source. The process waits it out on
/// the injected clock's monotonic timeline (a test advancing a manual clock wakes the scheduler); the row's `next_attempt_at` keeps it in wall-clock time so it
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
    private let clock: PulseClock
    private let policy: PolicyCache?
    private let random: RandomSource
    private let metrics: GatewayMetrics
    private let logger: GatewayLogger
    private let limiter: AsyncLimiter
    /// Logs when the upstream starts and stops failing (``UpstreamHealth``).
    let health: UpstreamHealth?
    private let wake: WakeSignal
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
        /// The deadline of this identity's latest entry in ``State/waiting`` while that entry is
        /// still there: announcing more rows of an identity that waits for the same time pushes no
        /// second entry (a paused upstream would otherwise grow the heap by one per request).
        var waitingUntil: Int64?
        /// Rows were announced while a worker was draining: it must not forget the identity when
        /// its last read came back empty (the read may have preceded their commit).
        var announcedWhileActive = false
        /// Rows announced while a worker was draining, counted: a sliding window reads again only
        /// when this moved (or its last read was full).
        var announcements = 0
        /// A crash batch was announced while a worker was draining: its window stops and the
        /// worker reads from the head, where the crash batch goes first.
        var crashAnnounced = false
        /// The window of the worker sending this identity's rows now: a crash batch announced
        /// while it runs stops it at once, before the next event row goes out.
        var window: WindowPump?
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
        /// When idle connections were last swept (the injected clock's monotonic time, which idle
        /// times are measured on too), or `nil` after a poke: the sweep runs at most every ``idleSweepMilliseconds``, not on every wake.
        var lastIdleSweep: Int64?
        /// Set when the upstream answered: the last outcome, for readiness.
        var upstreamReachable = true
        /// How many times ``poke()`` was called.
        var pokes = 0
        /// The most pokes a scheduler pass had seen when it started and after which nothing was
        /// being sent or ready to send (see ``settledPokes``).
        var settledPokes = 0
    }

    init(
        store: any GatewayStoring, connector: any UpstreamConnector, settings: ForwardingSettings, clock: PulseClock,
        random: RandomSource, metrics: GatewayMetrics, logger: GatewayLogger,
        policy: PolicyCache? = nil, health: UpstreamHealth? = nil
    ) {
        self.health = health
        self.store = store
        self.settings = settings
        self.clock = clock
        self.policy = policy
        self.random = random
        self.wake = WakeSignal(clock: clock)
        self.metrics = metrics
        self.logger = logger
        self.pool = UpstreamPool(
            connector: connector, capacity: settings.maxConnections, clock: clock, policy: policy,
            window: KeyedAttemptWindow(
                window: settings.connectWindow, perKey: settings.maxConnectsPerIdentity,
                overall: settings.maxConnectsPerWindow))
        self.limiter = AsyncLimiter(settings.maxInFlight)
    }

    /// Identities the scheduler has looked at so far (see ``State/schedulerVisits``).
    var schedulerVisits: Int { state.withLock { $0.schedulerVisits } }

    /// Open upstream connections.
    var openConnections: Int { pool.openCount }

    /// Healthy upstream connections closed to make room for another identity (see
    /// ``UpstreamPool/evictionCount``).
    var connectionEvictions: Int { pool.evictionCount }

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
        let now = clock.monotonicMilliseconds()
        let horizon = horizonMilliseconds
        var wakeScheduler = false
        let interrupted = state.withLock { state -> [WindowPump] in
            var interrupted: [WindowPump] = []
            for draft in drafts {
                if state.identities[draft.identityKey] == nil {
                    state.identities[draft.identityKey] = IdentityState(app: draft.app, connectPayload: draft.identity)
                } else if state.identities[draft.identityKey]?.active == true {
                    state.identities[draft.identityKey]?.announcedWhileActive = true
                    state.identities[draft.identityKey]?.announcements += 1
                    if draft.kind == .crashes {
                        state.identities[draft.identityKey]?.crashAnnounced = true
                        if let window = state.identities[draft.identityKey]?.window { interrupted.append(window) }
                    }
                }
                if Self.enqueue(draft.identityKey, in: &state, now: now, horizon: horizon) { wakeScheduler = true }
            }
            return interrupted
        }
        for window in interrupted { window.stop() }
        // Only when the scheduler has something new to do (an identity to start, or an earlier
        // time to wake at): rows of identities that are being drained or wait for their backoff
        // cost no wake-up of the scheduler's task per commit.
        if wakeScheduler { wake.signal() }
    }

    /// Rescans the outbox at once (after `pulsegate outbox requeue` or in tests) and wakes workers
    /// whose backoff has passed on the injected monotonic clock.
    ///
    /// Returns the poke's number: once ``settledPokes`` reaches it, the scheduler has rescanned
    /// since and found nothing to send (a test's "nothing is sent yet" without waiting in real
    /// time).
    @discardableResult
    func poke() -> Int {
        let number = state.withLock { state in
            state.lastRescan = nil
            state.lastIdleSweep = nil
            state.pokes += 1
            return state.pokes
        }
        wake.signal()
        return number
    }

    /// The number of the latest poke after which a scheduler pass ended with no worker active and
    /// no identity ready (rows not yet due only).
    var settledPokes: Int { state.withLock { $0.settledPokes } }

    /// The most often idle connections are swept (each sweep looks at every pooled connection, and
    /// the scheduler wakes on every intake commit that makes an identity ready).
    static let idleSweepMilliseconds: Int64 = 100

    // MARK: - Scheduling

    private func schedule() async {
        let rescanMilliseconds = Backoff.milliseconds(settings.rescanInterval)
        let idleMilliseconds = Backoff.milliseconds(settings.idleTimeout)
        while true {
            let now = clock.monotonicMilliseconds()
            let (stopping, rescanDue, pokes) = state.withLock { state in
                (
                    state.stopping, state.lastRescan.map { now &- $0 >= rescanMilliseconds || now < $0 } ?? true,
                    state.pokes
                )
            }
            if stopping { return }
            if rescanDue { await rescan(now: now) }
            let sweptAt = clock.monotonicMilliseconds()
            let sweepDue = state.withLock { state -> Bool in
                guard let last = state.lastIdleSweep, sweptAt - last < Self.idleSweepMilliseconds, sweptAt >= last
                else {
                    state.lastIdleSweep = sweptAt
                    return true
                }
                return false
            }
            if sweepDue {
                await pool.closeIdle(olderThan: idleMilliseconds)
                await policy?.closeIdleSessions(olderThan: idleMilliseconds)
            }
            let passEnd = clock.monotonicMilliseconds()
            startDueWorkers(now: passEnd)
            // Sleep until the next identity falls due, at most a 250 ms tick, on the injected clock:
            // a test that advances its clock to a retry's time wakes the scheduler for it.
            let sleep = state.withLock { state -> Int64 in
                if state.activeWorkers == 0 && state.ready.isEmpty {
                    state.settledPokes = max(state.settledPokes, pokes)
                }
                return state.waiting.earliest.map { min(250, max(1, $0 - passEnd)) } ?? 250
            }
            await wake.wait(upTo: .milliseconds(sleep))
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
                for index in state.identities.indices { state.identities.values[index].waitingUntil = nil }
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
        max(100, min(Backoff.milliseconds(settings.rescanInterval), 2_000))
    }

    /// No wait the forwarder sets lies further ahead than this (the longest backoff or connect
    /// window, plus slack); a later `notBefore` means the monotonic clock itself went back (a
    /// faked clock), and the identity is due now.
    private var horizonMilliseconds: Int64 {
        max(Backoff.milliseconds(settings.backoffMax), Backoff.milliseconds(settings.connectWindow)) * 2 + 1000
    }

    /// Puts an idle identity in the ready queue when it is due (or its wait lies beyond the
    /// horizon), else in the waiting heap (unless it waits there for that time already). Does
    /// nothing for an active or already queued identity.
    ///
    /// Returns whether the scheduler must look again: the identity became ready, or the earliest
    /// time it has to wake at moved closer.
    @discardableResult
    private static func enqueue(_ key: String, in state: inout State, now: Int64, horizon: Int64) -> Bool {
        guard let identity = state.identities[key], !identity.active, !identity.queued else { return false }
        if identity.notBefore <= now || identity.notBefore - now > horizon {
            state.identities[key]?.queued = true
            state.ready.append(key)
            return true
        }
        guard identity.waitingUntil != identity.notBefore else { return false }
        let earliest = state.waiting.earliest
        state.waiting.push(identity.notBefore, key)
        state.identities[key]?.waitingUntil = identity.notBefore
        return earliest.map { identity.notBefore < $0 } ?? true
    }

    /// Starts workers for ready identities (moving those whose wait is over from the heap first),
    /// at most `maxConnections` at once. Costs the identities that are due, not all identities.
    private func startDueWorkers(now: Int64) {
        let horizon = horizonMilliseconds
        state.withLock { state in
            guard !state.stopping else { return }
            while let (deadline, key) = state.waiting.popDue(now: now) {
                state.schedulerVisits += 1
                if state.identities[key]?.waitingUntil == deadline { state.identities[key]?.waitingUntil = nil }
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
            let now = clock.monotonicMilliseconds()
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
            notBefore = clock.monotonicMilliseconds() + leaseRetryMilliseconds
            return
        }
        while true {
            let (stopping, announcements) = state.withLock { state -> (Bool, Int) in
                // Read from the head below: a crash batch announced before this read is in it.
                state.identities[key]?.crashAnnounced = false
                return (state.stopping, state.identities[key]?.announcements ?? 0)
            }
            if stopping { return }
            // A lease that was not renewed in time may be another node's now: stop sending.
            guard store.holdsLease(identityKey: key) else {
                notBefore = clock.monotonicMilliseconds() + leaseRetryMilliseconds
                return
            }
            let rows: [OutboxRow]
            do {
                rows = try await store.nextRows(identityKey: key, limit: Self.readSize(settings.forwardWindow))
            } catch {
                logger.error("outbox read failed", ["error": "\(error)"])
                notBefore = clock.monotonicMilliseconds() + 1000
                return
            }
            guard let row = rows.first else {
                forget = true
                return
            }
            let due = dueTime(storedAt: row.nextAttemptAt)
            if due > clock.monotonicMilliseconds() {
                notBefore = due
                return
            }
            let retryAt =
                Self.slides(row) && settings.forwardWindow > 1 && rows.count > 1
                ? await slide(
                    rows, key: key, connectPayload: connectPayload,
                    read: WindowRead(
                        full: rows.count == Self.readSize(settings.forwardWindow), announcements: announcements))
                : await deliver(row, key: key, connectPayload: connectPayload)
            if let retryAt {
                notBefore = retryAt
                return
            }
        }
    }

    // MARK: - Window

    /// Rows read at once from the outbox: two windows, so a refill happens once per window sent.
    static func readSize(_ window: Int) -> Int { min(64, max(2, window * 2)) }

    /// Whether a row goes out in the sliding window: an event row that never failed. A row that
    /// failed before (`attempts > 0`), a crash batch or a crash-priority row (the `Crash` events
    /// that replaced a crash batch after a 501) is sent alone, with the single-row handling (the
    /// session's re-register on 401, the config pull on 409, the crash fallback on 501); the
    /// window opens again once it is delivered.
    static func slides(_ row: OutboxRow) -> Bool {
        row.attempts == 0 && row.kind == .events && row.priority > 0
    }

    /// What the worker knew at its last outbox read: whether it returned every row asked for
    /// (more may follow) and the identity's announcement count before it.
    struct WindowRead {
        var full: Bool
        var announcements: Int
    }

    /// Sends an identity's event rows with a sliding window on one connection, starting with
    /// `rows` (the head and what was read behind it).
    ///
    /// The sending is a ``WindowPump``'s: rows reach the wire in FIFO order, and row `i` goes out
    /// only while `i` is less than the oldest unanswered row's position plus
    /// ``ForwardingSettings/forwardWindow``; as each answer arrives the next row goes out, from the
    /// answer's completion on the connection's event loop thread. So up to the window is in flight
    /// and no row is sent `forwardWindow` or more places ahead of an unanswered one. This worker
    /// reads further rows behind the last one queued, two windows at a time (only when more are
    /// known to exist), deletes accepted rows in batches (one delete job in flight at a time, each
    /// riding the intake's group commit) and settles the rows that were not accepted.
    ///
    /// The window stops sending at the first row that is not accepted (no row behind it is handed
    /// over any more; rows already in flight finish), at a row that must go alone
    /// (``slides(_:)``), at a row not yet due, when a crash batch is announced for the identity or
    /// when the forwarder stops. Once nothing is in flight and every accepted row is deleted, it
    /// returns: `nil` to read again from the head (where a failed, rescheduled row is the next one
    /// sent, alone), or when to wake the identity (the earliest retry of a failed row).
    private func slide(_ rows: [OutboxRow], key: String, connectPayload: [UInt8], read first: WindowRead) async
        -> Int64?
    {
        let session: any UpstreamSession
        switch await openSession(for: rows[0], key: key, connectPayload: connectPayload) {
        case .ready(let ready): session = ready
        case .settled(let retryAt): return retryAt
        }
        do {
            try await session.connect()
        } catch {
            markReachable(false)
            await pool.discard(key)
            return await retryLater(rows[0], reason: error.message)
        }
        let window = settings.forwardWindow
        let readSize = Self.readSize(window)
        let metrics = self.metrics
        let pump = WindowPump(
            window: window, session: session, limiter: limiter, observeLatency: { metrics.forwardLatency(seconds: $0) })
        // Registered so that ``announce(_:)`` can stop it for a crash batch; a crash announced since
        // the head was read stops it before its first row.
        let crashSinceRead = state.withLock { state -> Bool in
            state.identities[key]?.window = pump
            return state.identities[key]?.crashAnnounced == true
        }
        if crashSinceRead { pump.stop() }
        defer { state.withLock { $0.identities[key]?.window = nil } }
        var read = first
        var last = rows[0].seq
        var endOfRows = false
        /// Queues the rows that slide and are due, up to the first that does not (the end of this run).
        func queue(_ rows: [OutboxRow]) {
            // Fleet mode: rows are queued only while this node surely holds the identity's lease, so
            // a lease lost mid-run (renewal failed) stops the window at what was already queued.
            guard store.holdsLease(identityKey: key) else {
                endOfRows = true
                return
            }
            let now = clock.monotonicMilliseconds()
            let sliding = rows.prefix { Self.slides($0) && dueTime(storedAt: $0.nextAttemptAt) <= now }
            if let tail = sliding.last { last = tail.seq }
            if sliding.count < rows.count { endOfRows = true }
            pump.push(sliding)
        }
        queue(rows)
        var accepted: [OutboxRow] = []
        var deleting = false
        var deleteFailed = false
        var lostConnection = false
        var wakes: [Int64] = []
        while true {
            let wake = await pump.next()
            if let latest = wake.finished.last {
                if case .failed = latest.outcome { markReachable(false) } else { markReachable(true) }
            }
            for finished in wake.finished {
                switch finished.outcome {
                case .accepted:
                    accepted.append(finished.row)
                case .refused(let reply):
                    if let wakeAt = await settle(reply, for: finished.row) { wakes.append(wakeAt) }
                case .failed(let failure):
                    lostConnection = true
                    wakes.append(await retryLater(finished.row, reason: failure.message))
                }
            }
            if let succeeded = wake.deleted {
                deleting = false
                if !succeeded {
                    deleteFailed = true
                    pump.stop()
                }
            }
            let (halt, announcements) = state.withLock { state in
                (
                    state.stopping || state.identities[key]?.crashAnnounced == true,
                    state.identities[key]?.announcements ?? 0
                )
            }
            if halt {
                endOfRows = true
                pump.stop()
            }
            // A delete rides a group commit: started for half a window of rows, or when nothing is
            // in flight any more (or the window stops), not for every answer.
            if !deleting, !deleteFailed, !accepted.isEmpty,
                accepted.count >= pump.deleteBatch || wake.inFlight == 0 || halt || endOfRows
            {
                let batch = accepted
                accepted = []
                deleting = true
                pump.deleteStarted()
                Task { pump.deleteFinished(await self.deleteAccepted(batch)) }
            }
            if wake.starved {
                await limiter.acquire()
                pump.grant()
            }
            if !endOfRows && wake.queued < window {
                // Read again only when more rows are known to exist.
                if read.full || read.announcements != announcements {
                    read.announcements = announcements
                    var more: [OutboxRow] = []
                    do {
                        more = try await store.eventRows(identityKey: key, after: last, limit: readSize)
                    } catch {
                        logger.error("outbox read failed", ["error": "\(error)"])
                        endOfRows = true
                    }
                    read.full = more.count == readSize
                    queue(more)
                } else {
                    pump.setRefillWanted(false)
                }
            } else if endOfRows {
                pump.setRefillWanted(false)
            }
            if !deleting && (accepted.isEmpty || deleteFailed) && pump.isDone
                && (endOfRows || !(read.full || read.announcements != announcements))
            {
                break
            }
        }
        if lostConnection { await pool.discard(key) }
        if deleteFailed { return clock.monotonicMilliseconds() + 1000 }
        return wakes.min()
    }

    /// Deletes rows the upstream accepted (one group-commit job); `false` when that failed (the
    /// rows stay and are sent again later, which the upstream's batch-id dedup absorbs).
    private func deleteAccepted(_ rows: [OutboxRow]) async -> Bool {
        do {
            try await store.delete(seqs: rows.map(\.seq))
            for row in rows { metrics.forwarded(kind: row.kind, result: "ok", app: row.app) }
            health?.succeeded()
            return true
        } catch {
            logger.error("outbox delete failed", ["rows": String(rows.count), "error": "\(error)"])
            return false
        }
    }

    /// Applies an answer other than acceptance to a row of a window: when to wake the identity, or
    /// `nil` when the row was dead-lettered (it left the outbox; nothing newer waits for it).
    private func settle(_ reply: UpstreamReply, for row: OutboxRow) async -> Int64? {
        let message = reply.message ?? ""
        switch reply.code {
        case 401, 409:
            // Resent at once, alone, where the single-row handling re-registers or pulls the config.
            return await retryLater(row, reason: "code \(reply.code): \(message)", immediately: true)
        case 0:
            return await retryLater(row, reason: "code 0 without data true")
        case 429, 500, 502...599:
            return await retryLater(row, reason: "code \(reply.code): \(message)")
        default:
            // 400, 403, 404, 501 to an event batch and unknown codes: refused for good.
            return await deadLetter(row, code: reply.code, message: message)
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
                let jitter = Int64(random.uniform(upTo: UInt64(max(0, Backoff.milliseconds(settings.backoffBase)))))
                let wakeAt = max(until, clock.monotonicMilliseconds() + 1) + jitter
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
                    retryingUnauthorized: true)
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
                    metrics.forwarded(kind: row.kind, result: "ok", app: row.app)
                    health?.succeeded()
                    return nil
                } catch {
                    logger.error("outbox delete failed", ["seq": String(row.seq), "error": "\(error)"])
                    return clock.monotonicMilliseconds() + 1000
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
        Backoff(base: settings.backoffBase, cap: settings.backoffMax)
            .delayMilliseconds(failures: attempts + 1, random: random)
    }

    /// The monotonic time a stored (wall-clock) `next_attempt_at` falls due: as far ahead as it is
    /// of the wall clock now, but a time further ahead than `backoffMax` (a wall clock that stepped
    /// back) is due now.
    private func dueTime(storedAt nextAttemptAt: Int64) -> Int64 {
        let ahead = nextAttemptAt - clock.wallClockMilliseconds()
        let now = clock.monotonicMilliseconds()
        guard ahead > 0, ahead <= Backoff.milliseconds(settings.backoffMax) else { return now }
        return now + ahead
    }

    private func retryLater(_ row: OutboxRow, reason: String, immediately: Bool = false) async -> Int64 {
        let delay = immediately ? 0 : max(1, backoffMilliseconds(attempts: row.attempts))
        let retryAt = clock.wallClockMilliseconds() + delay
        let wakeAt = clock.monotonicMilliseconds() + delay
        metrics.forwarded(kind: row.kind, result: "retry", app: row.app)
        // A 401 or 409 resent at once is the session's own handling, not an upstream failing.
        if !immediately { health?.failed(reason: reason) }
        logger.debug(
            "upstream send failed, will retry",
            [
                "app": row.app, "seq": String(row.seq), "attempts": String(row.attempts + 1), "reason": reason,
                "requestId": row.requestID ?? "-", "batchId": row.httpBatchID,
            ])
        do {
            try await store.reschedule(seq: row.seq, nextAttemptAt: retryAt, error: reason)
        } catch {
            logger.error("outbox reschedule failed", ["seq": String(row.seq), "error": "\(error)"])
        }
        return wakeAt
    }

    private func deadLetter(_ row: OutboxRow, code: Int, message: String) async -> Int64? {
        metrics.forwarded(kind: row.kind, result: "dead_letter", app: row.app)
        logger.warning(
            "upstream refused a batch; moved to dead letters",
            [
                "app": row.app, "seq": String(row.seq), "pulseBatchId": row.pulseBatchID, "code": String(code),
                "message": message, "requestId": row.requestID ?? "-", "batchId": row.httpBatchID,
            ])
        do {
            try await store.deadLetter(seq: row.seq, code: code, message: message, now: clock.wallClockMilliseconds())
            return nil
        } catch {
            logger.error("dead-letter move failed", ["seq": String(row.seq), "error": "\(error)"])
            return clock.monotonicMilliseconds() + 1000
        }
    }

    /// Replaces a crash row by `Crash` events in event batches, sent next.
    private func fallBack(_ row: OutboxRow, connectPayload: [UInt8], reason: String) async -> Int64? {
        metrics.forwarded(kind: row.kind, result: "fallback", app: row.app)
        let drafts = CrashFallback.eventDrafts(for: row, connectPayload: connectPayload)
        logger.info(
            "sending crash reports as Crash events",
            ["seq": String(row.seq), "reason": reason, "batches": String(drafts.count)])
        do {
            try await store.replaceWithFallback(
                seq: row.seq, httpBatchID: row.httpBatchID, drafts: drafts, now: clock.wallClockMilliseconds(),
                requestID: row.requestID)
            return nil
        } catch {
            logger.error("crash fallback failed", ["seq": String(row.seq), "error": "\(error)"])
            return clock.monotonicMilliseconds() + 1000
        }
    }
}

/// Turns a crash row into event rows carrying the same records as `Crash` events.
enum CrashFallback {
    /// `connectPayload` is the row's identity as CONNECT sends it (the `identities` row).
    static func eventDrafts(for row: OutboxRow, connectPayload: [UInt8]) -> [OutboxDraft] {
        guard let blob = row.fallback, let events = EventChunks.split(blob),
            let plaintext = try? row.storedPayload.plaintext(), let identity = identityJSON(plaintext)
        else { return [] }
        let (batches, _) = BatchSplitter.events.split(identity: identity, items: EncodedItems(events)) { chunk in
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

/// A binary min-heap of (deadline, identity key).
struct DeadlineHeap {
    private var entries: [(deadline: Int64, key: String)] = []

    var count: Int { entries.count }

    /// The earliest deadline (possibly of a stale entry), or `nil` when empty.
    var earliest: Int64? { entries.first?.deadline }

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
