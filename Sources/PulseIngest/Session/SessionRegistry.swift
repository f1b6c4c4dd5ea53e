import MsgTransRuntime
import Synchronization

/// The connected sessions of a server: which connection belongs to which app, and presence.
///
/// A session enters at a successful CLIENT_CONNECT and leaves when its connection closes. Presence
/// is a TTL refreshed by connect and every accepted heartbeat: a session is *present* while
/// `now < expiresAt`, judged with the injected clock.
final class SessionRegistry: Sendable {
    struct Entry {
        var appId: String
        var connection: MsgTransConnection
        var presenceExpiresAt: Int64
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// Adds a session that just connected.
    func add(connectionId: String, appId: String, connection: MsgTransConnection, presentUntil: Int64) {
        entries.withLock {
            $0[connectionId] = Entry(appId: appId, connection: connection, presenceExpiresAt: presentUntil)
        }
    }

    /// Refreshes a session's presence.
    func refresh(connectionId: String, presentUntil: Int64) {
        entries.withLock { $0[connectionId]?.presenceExpiresAt = presentUntil }
    }

    /// Removes a session whose connection closed.
    func remove(connectionId: String) {
        _ = entries.withLock { $0.removeValue(forKey: connectionId) }
    }

    /// Whether `connectionId` is present at `now`.
    func isPresent(connectionId: String, at now: Int64) -> Bool {
        entries.withLock { ($0[connectionId]?.presenceExpiresAt ?? .min) > now }
    }

    /// Open sessions and present sessions per app at `now`.
    func census(at now: Int64) -> [String: (sessions: Int, present: Int)] {
        entries.withLock { entries in
            var result: [String: (sessions: Int, present: Int)] = [:]
            for entry in entries.values {
                var counts = result[entry.appId] ?? (0, 0)
                counts.sessions += 1
                if entry.presenceExpiresAt > now {
                    counts.present += 1
                }
                result[entry.appId] = counts
            }
            return result
        }
    }

    /// The connections of `appId`'s sessions, by connection ID.
    func connections(of appId: String) -> [(connectionId: String, connection: MsgTransConnection)] {
        entries.withLock { entries in
            entries.compactMap { id, entry in entry.appId == appId ? (id, entry.connection) : nil }
                .sorted { $0.connectionId < $1.connectionId }
        }
    }
}
