import Synchronization

/// Upstream sessions keyed by identity: opened on demand, reused while open, closed when idle
/// for ``ForwardingSettings/idleTimeout`` or when the pool is at its cap and another identity
/// needs a connection (the least recently used idle session goes first).
final class UpstreamPool: Sendable {
    private struct Entry {
        var session: any UpstreamSession
        var lastUsed: Int64
        var inUse: Bool
    }

    private let connector: any UpstreamConnector
    private let capacity: Int
    private let clock: GatewayClock
    private let policy: PolicyCache?
    private let entries = Mutex<[String: Entry]>([:])

    init(connector: any UpstreamConnector, capacity: Int, clock: GatewayClock, policy: PolicyCache?) {
        self.connector = connector
        self.policy = policy
        self.capacity = capacity
        self.clock = clock
    }

    /// Open sessions.
    var openCount: Int { entries.withLock { $0.count } }

    /// The open session of `key`, or a new one (which may close the least recently used idle
    /// session first). The session is marked in use until ``release(_:)``.
    func acquire(key: String, connectPayload: [UInt8]) async throws(UpstreamFailure) -> any UpstreamSession {
        let now = clock.now()
        enum Step {
            case reuse(any UpstreamSession)
            case open([any UpstreamSession])
        }
        let step = entries.withLock { entries -> Step in
            if var entry = entries[key], entry.session.isOpen {
                entry.inUse = true
                entry.lastUsed = now
                entries[key] = entry
                return .reuse(entry.session)
            }
            var evicted: [any UpstreamSession] = []
            if let stale = entries.removeValue(forKey: key) { evicted.append(stale.session) }
            while entries.count >= capacity {
                guard
                    let victim = entries.filter({ !$0.value.inUse }).min(by: { $0.value.lastUsed < $1.value.lastUsed })
                else { break }
                entries.removeValue(forKey: victim.key)
                evicted.append(victim.value.session)
            }
            return .open(evicted)
        }
        switch step {
        case .reuse(let session):
            return session
        case .open(let evicted):
            for session in evicted { await session.close() }
            let session = try await connector.open(connectPayload: connectPayload, policy: policy)
            let displaced = entries.withLock { entries -> (any UpstreamSession)? in
                let previous = entries[key]?.session
                entries[key] = Entry(session: session, lastUsed: clock.now(), inUse: true)
                return previous
            }
            if let displaced, displaced !== session { await displaced.close() }
            return session
        }
    }

    /// Marks the session of `key` idle.
    func release(_ key: String) {
        let now = clock.now()
        entries.withLock { entries in
            entries[key]?.inUse = false
            entries[key]?.lastUsed = now
        }
    }

    /// Closes and forgets the session of `key` (after a transport failure or a 401).
    func discard(_ key: String) async {
        let session = entries.withLock { $0.removeValue(forKey: key)?.session }
        await session?.close()
    }

    /// Closes sessions idle for longer than `idleMilliseconds` and sessions that closed on their own.
    func closeIdle(olderThan idleMilliseconds: Int64) async {
        let now = clock.now()
        let victims = entries.withLock { entries -> [any UpstreamSession] in
            let keys = entries.filter { entry in
                !entry.value.inUse && (now - entry.value.lastUsed >= idleMilliseconds || !entry.value.session.isOpen)
            }.map(\.key)
            return keys.compactMap { entries.removeValue(forKey: $0)?.session }
        }
        for session in victims { await session.close() }
    }

    /// Closes every session.
    func closeAll() async {
        let all = entries.withLock { entries -> [any UpstreamSession] in
            defer { entries.removeAll() }
            return entries.values.map(\.session)
        }
        for session in all { await session.close() }
    }
}
