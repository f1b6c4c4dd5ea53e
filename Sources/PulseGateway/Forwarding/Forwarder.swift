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
    private let store: GatewayStore
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
    }

    private struct State {
        var identities: [String: IdentityState] = [:]
        var activeWorkers = 0
        var stopping = false
        var scheduler: Task<Void, Never>?
        var workers: [String: Task<Void, Never>] = [:]
        var lastRescan: Int64?
        /// Set when the upstream answered: the last outcome, for readiness.
        var upstreamReachable = true
    }

    init(
        store: GatewayStore, connector: any UpstreamConnector, settings: ForwardingSettings, clock: GatewayClock,
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
        state.withLock { state in
            for draft in drafts where state.identities[draft.identityKey] == nil {
                state.identities[draft.identityKey] = IdentityState(app: draft.app, connectPayload: draft.identity)
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
            state.withLock { state in
                state.lastRescan = now
                for identity in pending {
                    let notBefore = dueTime(storedAt: identity.nextAttemptAt)
                    if var known = state.identities[identity.identityKey] {
                        if !known.active { known.notBefore = max(notBefore, known.throttledUntil) }
                        state.identities[identity.identityKey] = known
                    } else {
                        state.identities[identity.identityKey] = IdentityState(
                            app: identity.app, connectPayload: identity.identity, notBefore: notBefore)
                    }
                }
            }
        } catch {
            logger.error("outbox scan failed", ["error": "\(error)"])
        }
    }

    /// No wait the forwarder sets lies further ahead than this (the longest backoff or connect
    /// window, plus slack); a later `notBefore` means the monotonic clock itself went back (a
    /// faked clock), and the identity is due now.
    private var horizonMilliseconds: Int64 {
        max(Self.milliseconds(settings.backoffMax), Self.milliseconds(settings.connectWindow)) * 2 + 1000
    }

    private func startDueWorkers(now: Int64) {
        let horizon = horizonMilliseconds
        state.withLock { state in
            guard !state.stopping else { return }
            let due = state.identities.filter { entry in
                !entry.value.active && (entry.value.notBefore <= now || entry.value.notBefore - now > horizon)
            }
            for (key, identity) in due.sorted(by: { $0.value.notBefore < $1.value.notBefore }) {
                guard state.activeWorkers < settings.maxConnections else { break }
                state.identities[key]?.active = true
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
            state.withLock { state in
                state.activeWorkers -= 1
                state.workers[key] = nil
                if forget {
                    state.identities[key] = nil
                } else {
                    state.identities[key]?.active = false
                    state.identities[key]?.notBefore = notBefore
                }
            }
            pool.release(key)
            wake.signal()
        }
        while !state.withLock({ $0.stopping }) {
            let row: OutboxRow?
            do {
                row = try await store.head(identityKey: key)
            } catch {
                logger.error("outbox read failed", ["error": "\(error)"])
                notBefore = monotonic.now() + 1000
                return
            }
            guard let row else {
                forget = true
                return
            }
            let due = dueTime(storedAt: row.nextAttemptAt)
            if due > monotonic.now() {
                notBefore = due
                return
            }
            let retryAt = await deliver(row, key: key, connectPayload: connectPayload)
            if let retryAt {
                notBefore = retryAt
                return
            }
        }
    }

    // MARK: - Delivery

    /// Sends one row and applies the outcome; returns when to retry the identity, or `nil` to go on.
    private func deliver(_ row: OutboxRow, key: String, connectPayload: [UInt8]) async -> Int64? {
        await limiter.acquire()
        defer { limiter.release() }
        var pulledConfig = false
        while true {
            let session: any UpstreamSession
            do {
                session = try await pool.acquire(key: key, connectPayload: connectPayload)
            } catch {
                switch error.kind {
                case .throttled(let until):
                    logger.debug("connect attempts capped; waiting", ["seq": String(row.seq)])
                    // Jitter, so identities capped together do not come back in lock step.
                    let jitter = Int64(random.unit() * Double(Self.milliseconds(settings.backoffBase)))
                    let wakeAt = max(until, monotonic.now() + 1) + jitter
                    state.withLock { $0.identities[key]?.throttledUntil = wakeAt }
                    return wakeAt
                case .transport:
                    markReachable(false)
                    return await retryLater(row, reason: error.message)
                case .connectRejected(let code):
                    markReachable(true)
                    if code == 400 || code == 403 || code == 404 {
                        return await deadLetter(row, code: code, message: error.message)
                    }
                    return await retryLater(row, reason: error.message)
                }
            }
            if row.kind == .crashes && session.lacksCrashUpload {
                return await fallBack(row, reason: "upstream lacks crash upload")
            }
            let operation: PulseBizType = row.kind == .crashes ? .clientCrashBatchUpload : .clientEventBatchUpload
            let started = ContinuousClock.now
            let reply: UpstreamReply
            do {
                reply = try await session.request(operation, payload: row.payload)
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
                return await fallBack(row, reason: "upstream answered 501 to crash upload")
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

    private func retryLater(_ row: OutboxRow, reason: String) async -> Int64 {
        let delay = max(1, backoffMilliseconds(attempts: row.attempts))
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
    private func fallBack(_ row: OutboxRow, reason: String) async -> Int64? {
        metrics.forwarded(kind: row.kind, result: "fallback")
        let drafts = CrashFallback.eventDrafts(for: row)
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
    static func eventDrafts(for row: OutboxRow) -> [OutboxDraft] {
        guard let blob = row.fallback, let events = EventChunks.split(blob), let identity = identityJSON(row.payload)
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
                app: row.app, identityKey: row.identityKey, identity: row.identity, kind: .events,
                pulseBatchID: batch.batchID, payload: batch.payload,
                compression: batch.payload.count >= OTLPMapper.compressionMinBytes
                    ? OTLPMapper.compressionZstd : OTLPMapper.compressionNone,
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
