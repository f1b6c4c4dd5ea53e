import PulseStorage

/// Keys and typed access for the `setting` table.
enum QueueSettings {
    static let consent = "consent"
    static let killSwitch = "kill_switch"
    static let lifecycle = "lifecycle"
    static let deviceId = "device_id"
    static let installationId = "installation_id"
    static let holdUntil = "hold_until_ms"
    static let authHoldUntil = "auth_hold_until_ms"
    static let windowStart = "window_start_ms"
    static let windowAttempts = "window_attempts"
    static let lastHandOver = "last_hand_over_ms"

    static func value(_ connection: SQLiteConnection, _ key: String) throws -> SQLiteValue? {
        try connection.queryFirst("SELECT value FROM setting WHERE key = ?", [key]) { row in try row.value(at: 0) }
    }

    static func string(_ connection: SQLiteConnection, _ key: String) throws -> String? {
        if case .text(let text) = try value(connection, key) {
            return text
        }
        return nil
    }

    static func integer(_ connection: SQLiteConnection, _ key: String) throws -> Int64? {
        if case .integer(let number) = try value(connection, key) {
            return number
        }
        return nil
    }

    static func set(_ connection: SQLiteConnection, _ key: String, _ value: (any SQLiteBindable)?) throws {
        try connection.execute(
            "INSERT INTO setting(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [key, value])
    }

    /// Whether records may be collected now; `nil` when they may, else the reason they are refused.
    static func collectionStop(_ connection: SQLiteConnection) throws -> DropReason? {
        let rows = try connection.query(
            "SELECT key, value FROM setting WHERE key IN ('consent', 'kill_switch')"
        ) { row in (try row.column(0, as: String.self), try row.value(at: 1)) }
        var stop: DropReason?
        for (key, value) in rows {
            if key == consent, value == .text("revoked") {
                stop = .consent
            }
            if key == killSwitch, value == .integer(1), stop == nil {
                stop = .killSwitch
            }
        }
        return stop
    }

    /// The stored identity value for `key`, generated once with `make` when missing.
    static func identifier(_ connection: SQLiteConnection, _ key: String, make: () -> String) throws -> String {
        if let existing = try string(connection, key) {
            return existing
        }
        let fresh = make()
        try set(connection, key, fresh)
        return fresh
    }
}
