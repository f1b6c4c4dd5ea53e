import PulseStorage

/// Per (app, installation) delivery state in the gateway's database: first and last sight, batches received,
/// the received sequence numbers as ranges, and the latest diagnostics record.
///
/// ``record(_:app:now:_:)`` runs inside the intake's commit of the batch, and only for a new batch, so a
/// duplicate never counts twice and the state is exactly as durable as the batch itself.
enum DiagnosticsLedger {
    /// Sequence numbers this far above the highest one seen are ignored (a corrupt or hostile value must not
    /// make every device look like it lost billions of batches).
    static let maximumSequenceJump: Int64 = 1_000_000

    /// One range of received sequence numbers; `firstAt` is the earliest receive time inside it.
    struct ReceivedRange: Sendable, Equatable {
        var low: Int64
        var high: Int64
        var firstAt: Int64
    }

    /// One missing range of sequence numbers.
    struct MissingRange: Sendable, Equatable {
        var from: Int64
        var to: Int64
        var count: Int64 { to - from + 1 }
    }

    /// A device's stored state.
    struct Device: Sendable {
        var installationID: String
        var deviceID: String
        var firstSeen: Int64
        var lastSeen: Int64
        var batchesReceived: Int64
        var highestSequence: Int64
        var attempted: Int64?
        var sentOK: Int64?
        var sentWithErrors: Int64?
        var latest: [UInt8]?
        var received: [ReceivedRange] = []
    }

    /// Updates the sender's state for one new batch.
    static func record(_ observation: DiagnosticsObservation, app: String, now: Int64, _ connection: SQLiteConnection)
        throws
    {
        // Every statement binds its values straight into SQLite (this runs in each intake job).
        let key: Key = { row in
            try row.bind(app)
            try row.bind(observation.installationID)
        }
        let stored = try connection.queryFirst(
            "SELECT highest_sequence, latest_sequence FROM diagnostics_device WHERE app = ? AND installation_id = ?",
            binding: key
        ) { row in (try row.column(0, as: Int64.self), try row.column(1, as: Int64.self)) }
        if stored == nil {
            try connection.execute(
                """
                INSERT INTO diagnostics_device(app, installation_id, device_id, first_seen, last_seen)
                VALUES (?, ?, ?, ?, ?)
                """
            ) { row in
                try key(&row)
                try row.bind(observation.deviceID)
                try row.bind(now)
                try row.bind(now)
            }
        }
        let highest = stored?.0 ?? 0
        var latestSequence = stored?.1 ?? -1
        var sequence = observation.sequence
        if let number = sequence, number > highest + maximumSequenceJump {
            sequence = nil
        }
        var counts = true
        if let sequence {
            counts = try addSequence(sequence, key: key, now: now, connection)
        }
        try connection.execute(
            """
            UPDATE diagnostics_device SET last_seen = max(last_seen, ?), device_id = ?,
                batches_received = batches_received + ?, highest_sequence = max(highest_sequence, ?)
            WHERE app = ? AND installation_id = ?
            """
        ) { row in
            try row.bind(now)
            try row.bind(observation.deviceID)
            try row.bind(counts ? 1 : 0)
            try row.bind(sequence ?? 0)
            try key(&row)
        }
        // The latest record is the one of the highest sequence number (delivery can be out of order); a record
        // without a number replaces one without a number.
        if let record = observation.record, counts, (sequence ?? latestSequence) >= latestSequence {
            latestSequence = sequence ?? latestSequence
            try connection.execute(
                """
                UPDATE diagnostics_device SET latest = ?, latest_sequence = ?, attempted = ?, sent_ok = ?,
                    sent_with_errors = ?
                WHERE app = ? AND installation_id = ?
                """
            ) { row in
                try row.bind(record)
                try row.bind(latestSequence)
                try row.bind(observation.attempted)
                try row.bind(observation.sentOK)
                try row.bind(observation.sentWithErrors)
                try key(&row)
            }
        }
    }

    /// Binds a device's key (app, installation id) as the next two parameters.
    private typealias Key = (inout SQLiteBindings) throws -> Void

    /// Adds `sequence` to the received ranges; returns `false` when it was received before.
    private static func addSequence(
        _ sequence: Int64, key: Key, now: Int64, _ connection: SQLiteConnection
    ) throws -> Bool {
        let inside = try connection.queryFirst(
            """
            SELECT 1 FROM diagnostics_received WHERE app = ? AND installation_id = ? AND low <= ? AND high >= ?
            """,
            binding: { row in
                try key(&row)
                try row.bind(sequence)
                try row.bind(sequence)
            }, { _ in true })
        if inside == true { return false }
        let left = try connection.queryFirst(
            "SELECT low, first_at FROM diagnostics_received WHERE app = ? AND installation_id = ? AND high = ?",
            binding: { row in
                try key(&row)
                try row.bind(sequence - 1)
            }, { row in (try row.column(0, as: Int64.self), try row.column(1, as: Int64.self)) })
        let right = try connection.queryFirst(
            "SELECT high, first_at FROM diagnostics_received WHERE app = ? AND installation_id = ? AND low = ?",
            binding: { row in
                try key(&row)
                try row.bind(sequence + 1)
            }, { row in (try row.column(0, as: Int64.self), try row.column(1, as: Int64.self)) })
        let low = left?.0 ?? sequence
        let high = right?.0 ?? sequence
        let firstAt = min(now, left?.1 ?? now, right?.1 ?? now)
        if left != nil {
            try connection.execute(
                "DELETE FROM diagnostics_received WHERE app = ? AND installation_id = ? AND low = ?",
                binding: { row in
                    try key(&row)
                    try row.bind(low)
                })
        }
        if right != nil {
            try connection.execute(
                "DELETE FROM diagnostics_received WHERE app = ? AND installation_id = ? AND low = ?",
                binding: { row in
                    try key(&row)
                    try row.bind(sequence + 1)
                })
        }
        try connection.execute(
            "INSERT INTO diagnostics_received(app, installation_id, low, high, first_at) VALUES (?, ?, ?, ?, ?)",
            binding: { row in
                try key(&row)
                try row.bind(low)
                try row.bind(high)
                try row.bind(firstAt)
            })
        return true
    }

    /// Every device of `app` (all apps when `nil`) with its received ranges, ordered by app and installation.
    /// `records: false` leaves ``Device/latest`` out (the `/metrics` gauges need only the ranges).
    static func devices(app: String?, records: Bool = true, _ connection: SQLiteConnection) throws -> [(
        app: String, device: Device
    )] {
        let filter = app == nil ? "" : " WHERE app = ?"
        let arguments: [any SQLiteBindable] = app.map { [$0] } ?? []
        var devices = try connection.query(
            """
            SELECT app, installation_id, device_id, first_seen, last_seen, batches_received, highest_sequence,
                attempted, sent_ok, sent_with_errors, \(records ? "latest" : "NULL")
            FROM diagnostics_device\(filter) ORDER BY app, installation_id
            """, arguments
        ) { row in
            (
                app: try row.column(0, as: String.self),
                device: Device(
                    installationID: try row.column(1, as: String.self), deviceID: try row.column(2, as: String.self),
                    firstSeen: try row.column(3, as: Int64.self), lastSeen: try row.column(4, as: Int64.self),
                    batchesReceived: try row.column(5, as: Int64.self),
                    highestSequence: try row.column(6, as: Int64.self), attempted: try row.column(7, as: Int64?.self),
                    sentOK: try row.column(8, as: Int64?.self), sentWithErrors: try row.column(9, as: Int64?.self),
                    latest: try row.column(10, as: [UInt8]?.self))
            )
        }
        let rows = try connection.query(
            """
            SELECT app, installation_id, low, high, first_at FROM diagnostics_received\(filter)
            ORDER BY app, installation_id, low
            """, arguments
        ) { row in
            (
                app: try row.column(0, as: String.self), installationID: try row.column(1, as: String.self),
                range: ReceivedRange(
                    low: try row.column(2, as: Int64.self), high: try row.column(3, as: Int64.self),
                    firstAt: try row.column(4, as: Int64.self))
            )
        }
        attach(rows, to: &devices)
        return devices
    }

    /// Gives each device its received ranges (`ranges` in the order of `low` per device), whichever
    /// store read them.
    static func attach(
        _ ranges: [(app: String, installationID: String, range: ReceivedRange)],
        to devices: inout [(app: String, device: Device)]
    ) {
        var byDevice: [String: [ReceivedRange]] = [:]
        for entry in ranges {
            byDevice[entry.app + "\u{0}" + entry.installationID, default: []].append(entry.range)
        }
        for index in devices.indices {
            devices[index].device.received =
                byDevice[devices[index].app + "\u{0}" + devices[index].device.installationID] ?? []
        }
    }

    /// The gaps of a device's received ranges (sorted by `low`): the numbers from 1 up to the highest received
    /// that never arrived. A hole is *missing* once a higher number has been received and `graceMilliseconds`
    /// have passed since then (`now` − the earliest receive time above the hole); until then it is *pending*.
    static func gaps(_ received: [ReceivedRange], now: Int64, graceMilliseconds: Int64) -> (
        missing: [MissingRange], pending: [MissingRange]
    ) {
        var missing: [MissingRange] = []
        var pending: [MissingRange] = []
        // The earliest receive time at or above each range.
        var earliestAbove = [Int64](repeating: .max, count: received.count + 1)
        for index in stride(from: received.count - 1, through: 0, by: -1) {
            earliestAbove[index] = min(received[index].firstAt, earliestAbove[index + 1])
        }
        var expected: Int64 = 1
        for (index, range) in received.enumerated() {
            if range.low > expected {
                let hole = MissingRange(from: expected, to: range.low - 1)
                if now - earliestAbove[index] >= graceMilliseconds {
                    missing.append(hole)
                } else {
                    pending.append(hole)
                }
            }
            expected = max(expected, range.high + 1)
        }
        return (missing, pending)
    }
}
