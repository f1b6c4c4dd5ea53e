import PulseKit
import Synchronization

/// Upstream sessions keyed by identity: opened on demand, reused while open, closed when idle
/// for ``ForwardingSettings/idleTimeout`` or when the pool is at its cap and another identity
/// needs a connection (the least recently used idle session goes first).
///
/// ``ForwardingSettings/maxConnections`` bounds the sessions open *and being opened*: when every
/// slot holds a busy session, a new connect waits for a slot (a release or a close). Every connect
/// first passes the connect window (PulseKit's ``KeyedAttemptWindow``: per identity and overall); a refused one throws
/// ``UpstreamFailure/Kind/throttled(until:)`` without touching the network. A session the pool
/// closes while it is still open and idle (evicted for another identity, or idle past the timeout)
/// was healthy, so its connect is taken back out of the window: the caps bound reconnects after
/// failures (refused or failed connects, sessions the peer dropped, sessions discarded after a
/// transport failure or a second 401), not the ordinary churn of many identities through a pool
/// smaller than their number. All times are on the injected monotonic clock.
final class UpstreamPool: Sendable {
    private struct Entry {
        var session: any UpstreamSession
        var lastUsed: Int64
        var inUse: Bool
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Connects under way (each holds a slot).
        var opening = 0
        var window: KeyedAttemptWindow<String>
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// Healthy sessions closed to make room for another identity.
        var evictions = 0
    }

    private let connector: any UpstreamConnector
    private let capacity: Int
    private let clock: PulseClock
    private let policy: PolicyCache?
    private let state: Mutex<State>

    init(
        connector: any UpstreamConnector, capacity: Int, clock: PulseClock, policy: PolicyCache?,
        window: KeyedAttemptWindow<String>
    ) {
        self.connector = connector
        self.policy = policy
        self.capacity = capacity
        self.clock = clock
        self.state = Mutex(State(window: window))
    }

    /// Open sessions.
    var openCount: Int { state.withLock { $0.entries.count } }

    /// Healthy sessions closed so far because the pool was full and another identity needed a
    /// connection: a pool smaller than the working set of identities makes this grow with the
    /// forwarded rows (each eviction costs a later TCP connect plus CLIENT_CONNECT).
    var evictionCount: Int { state.withLock { $0.evictions } }

    /// The open session of `key`, or a new one (which may close the least recently used idle
    /// session first, or wait for a slot). The session is marked in use until ``release(_:)``.
    func acquire(key: String, connectPayload: [UInt8]) async throws(UpstreamFailure) -> any UpstreamSession {
        enum Step {
            case reuse(any UpstreamSession)
            case open([any UpstreamSession])
            case wait([any UpstreamSession])
            case throttled(Int64)
        }
        while true {
            let now = clock.monotonicMilliseconds()
            let step = state.withLock { state -> Step in
                if var entry = state.entries[key], entry.session.isOpen {
                    entry.inUse = true
                    entry.lastUsed = now
                    state.entries[key] = entry
                    return .reuse(entry.session)
                }
                var evicted: [any UpstreamSession] = []
                if let stale = state.entries.removeValue(forKey: key) { evicted.append(stale.session) }
                let allowed = Backoff.milliseconds(state.window.earliestStart(key: key, at: .milliseconds(now)))
                if allowed > now { return .throttled(allowed) }
                while state.entries.count + state.opening >= capacity {
                    guard
                        let victim = state.entries.filter({ !$0.value.inUse }).min(by: {
                            $0.value.lastUsed < $1.value.lastUsed
                        })
                    else { return .wait(evicted) }
                    state.entries.removeValue(forKey: victim.key)
                    if victim.value.session.isOpen {
                        state.window.takeBackLatest(key: victim.key)
                        state.evictions += 1
                    }
                    evicted.append(victim.value.session)
                }
                state.window.record(key: key, at: .milliseconds(now))
                state.opening += 1
                return .open(evicted)
            }
            switch step {
            case .reuse(let session):
                return session
            case .throttled(let until):
                throw UpstreamFailure(kind: .throttled(until: until), message: "connect attempts capped")
            case .wait(let evicted):
                for session in evicted { await session.close() }
                await waitForSlot()
            case .open(let evicted):
                for session in evicted { await session.close() }
                let session: any UpstreamSession
                do {
                    session = try await connector.open(connectPayload: connectPayload, policy: policy)
                } catch {
                    freeSlot { $0.opening -= 1 }
                    throw error
                }
                let displaced = state.withLock { state -> (any UpstreamSession)? in
                    state.opening -= 1
                    let previous = state.entries[key]?.session
                    state.entries[key] = Entry(session: session, lastUsed: clock.monotonicMilliseconds(), inUse: true)
                    return previous
                }
                if let displaced, displaced !== session {
                    await displaced.close()
                    freeSlot { _ in }
                }
                return session
            }
        }
    }

    /// Marks the session of `key` idle (a waiting connect may now evict it).
    func release(_ key: String) {
        let now = clock.monotonicMilliseconds()
        freeSlot { state in
            state.entries[key]?.inUse = false
            state.entries[key]?.lastUsed = now
        }
    }

    /// Closes and forgets the session of `key` (after a transport failure or a second 401).
    func discard(_ key: String) async {
        let session = state.withLock { $0.entries.removeValue(forKey: key)?.session }
        await session?.close()
        freeSlot { _ in }
    }

    /// Closes sessions idle for longer than `idleMilliseconds` and sessions that closed on their own.
    func closeIdle(olderThan idleMilliseconds: Int64) async {
        let now = clock.monotonicMilliseconds()
        let victims = state.withLock { state -> [any UpstreamSession] in
            state.window.prune(now: .milliseconds(now))
            let keys = state.entries.filter { entry in
                !entry.value.inUse
                    && (now - entry.value.lastUsed >= idleMilliseconds || now < entry.value.lastUsed
                        || !entry.value.session.isOpen)
            }.map(\.key)
            return keys.compactMap { key in
                guard let session = state.entries.removeValue(forKey: key)?.session else { return nil }
                if session.isOpen { state.window.takeBackLatest(key: key) }
                return session
            }
        }
        for session in victims { await session.close() }
        if !victims.isEmpty { freeSlot { _ in } }
    }

    /// Closes every session.
    func closeAll() async {
        let all = state.withLock { state -> [any UpstreamSession] in
            defer { state.entries.removeAll() }
            return state.entries.values.map(\.session)
        }
        for session in all { await session.close() }
        freeSlot { _ in }
    }

    /// Applies `change` and wakes every connect waiting for a slot (each re-checks).
    private func freeSlot(_ change: (inout State) -> Void) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            change(&state)
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func waitForSlot() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let free = state.withLock { state -> Bool in
                let busy = state.entries.values.allSatisfy(\.inUse)
                if state.entries.count + state.opening < capacity || !busy { return true }
                state.waiters.append(continuation)
                return false
            }
            if free { continuation.resume() }
        }
    }
}
