import PulseHashing
import PulseKit
import PulseStorage

/// The queue's operations on one connection. Every function runs on the executor's thread inside a
/// transaction (or a group-commit savepoint) opened by ``Uploader``.
enum QueueStore {
    /// The outcome of inserting one record.
    struct Inserted: Sendable {
        var sequence: Int64
        /// Whether the record's group has reached a size trigger (records or bytes).
        var reachedSizeLimit: Bool
    }

    // MARK: - Resources

    /// The id of the resource with these encoded attributes, inserted if new.
    static func resourceId(_ connection: SQLiteConnection, attributes: [UInt8]) throws -> Int64 {
        let fingerprint = SHA256.hexDigest(attributes)
        if let id = try connection.queryFirst(
            "SELECT id FROM resource WHERE fingerprint = ?", [fingerprint],
            {
                row in try row.column(0, as: Int64.self)
            })
        {
            return id
        }
        try connection.execute(
            "INSERT INTO resource(fingerprint, attributes) VALUES (?, ?)", [fingerprint, attributes])
        return connection.lastInsertRowID
    }

    // MARK: - Records

    /// Queues `record`, making room under the caps first. Throws (leaving nothing behind) when the record is
    /// refused; the refusal is counted under its drop reason by the caller's separate transaction.
    static func insert(
        _ connection: SQLiteConnection, record: EncodedRecord, resourceId: Int64, policy: UploadPolicy
    ) throws -> Inserted {
        // One read for everything the decision needs: collection state, queue totals, the group's totals.
        let state = try connection.queryFirst(
            """
            SELECT t.records, t.bytes,
                (SELECT value FROM setting WHERE key = 'consent'),
                (SELECT value FROM setting WHERE key = 'kill_switch'),
                coalesce((SELECT records FROM pending_group WHERE signal = ? AND class = ?), 0),
                coalesce((SELECT bytes FROM pending_group WHERE signal = ? AND class = ?), 0)
            FROM queue_total t WHERE t.id = 1
            """,
            [
                record.signal.storageCode, record.recordClass.rawValue, record.signal.storageCode,
                record.recordClass.rawValue,
            ]
        ) { row in
            (
                records: try row.column(0, as: Int64.self), bytes: try row.column(1, as: Int64.self),
                consent: try row.value(at: 2), killSwitch: try row.value(at: 3),
                groupRecords: try row.column(4, as: Int64.self), groupBytes: try row.column(5, as: Int64.self)
            )
        }
        guard let state else {
            throw StorageError(.corrupt, "queue_total has no row")
        }
        if state.consent == .text("revoked") {
            throw RecordRefusal(reason: .consent)
        }
        if state.killSwitch == .integer(1) {
            throw RecordRefusal(reason: .killSwitch)
        }
        let size = Int64(record.fragment.count)
        let limit = record.recordClass == .attachment ? Int64.max : Int64(policy.maximumBatchBytes)
        if size > limit || size > policy.maximumQueueBytes {
            throw RecordRefusal(reason: .oversized)
        }
        var groupRecords = state.groupRecords
        var groupBytes = state.groupBytes
        if state.records + 1 > policy.maximumQueueRecords || state.bytes + size > policy.maximumQueueBytes {
            guard try makeRoom(connection, records: 1, bytes: size, forClass: record.recordClass, policy: policy)
            else {
                throw RecordRefusal(reason: .cap)
            }
            // Dropping may have emptied part of this record's group.
            let group = try connection.queryFirst(
                "SELECT records, bytes FROM pending_group WHERE signal = ? AND class = ?",
                [record.signal.storageCode, record.recordClass.rawValue]
            ) { row in (try row.column(0, as: Int64.self), try row.column(1, as: Int64.self)) }
            groupRecords = group?.0 ?? 0
            groupBytes = group?.1 ?? 0
        }
        try connection.execute(
            """
            INSERT INTO record(signal, class, resource_id, created_ms, record_id, crash_id, size, fragment)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                record.signal.storageCode, record.recordClass.rawValue, resourceId, record.createdMilliseconds,
                record.recordId, record.crashId, size, record.fragment,
            ])
        let reached =
            groupRecords + 1 >= Int64(policy.maximumBatchRecords)
            || groupBytes + size >= Int64(policy.maximumBatchBytes)
        return Inserted(sequence: connection.lastInsertRowID, reachedSizeLimit: reached)
    }

    /// A record the queue will not take, with the reason it is counted under.
    struct RecordRefusal: Error {
        var reason: DropReason
    }

    // MARK: - Caps

    /// Drops queued data, lowest drop rank and oldest first, until `records` more records and `bytes` more
    /// bytes fit under the caps. Data ranked above `recordClass` is never dropped to make room for it.
    ///
    /// - Returns: false when not enough room can be made (the new record must be refused).
    static func makeRoom(
        _ connection: SQLiteConnection, records: Int64, bytes: Int64, forClass recordClass: RecordClass,
        policy: UploadPolicy
    ) throws -> Bool {
        while true {
            let (totalRecords, totalBytes) = try totals(connection)
            if totalRecords + records <= policy.maximumQueueRecords && totalBytes + bytes <= policy.maximumQueueBytes {
                return true
            }
            guard try dropOldest(connection, upToRank: recordClass.dropRank) else {
                return false
            }
        }
    }

    /// Enforces the caps without adding anything (after a policy lowered them).
    static func enforceCaps(_ connection: SQLiteConnection, policy: UploadPolicy) throws {
        _ = try makeRoom(connection, records: 0, bytes: 0, forClass: .crash, policy: policy)
    }

    static func totals(_ connection: SQLiteConnection) throws -> (records: Int64, bytes: Int64) {
        try connection.queryFirst("SELECT records, bytes FROM queue_total WHERE id = 1") { row in
            (try row.column(0, as: Int64.self), try row.column(1, as: Int64.self))
        } ?? (0, 0)
    }

    /// The classes of each drop rank, lowest rank first.
    private static let ranks: [[RecordClass]] = [[.attachment], [.standard], [.lifecycle, .crash]]

    /// Drops the oldest batch or waiting record (whichever holds older data) of the lowest non-empty rank up to
    /// `maxRank`.
    private static func dropOldest(_ connection: SQLiteConnection, upToRank maxRank: Int) throws -> Bool {
        for rank in 0...maxRank {
            let classes = ranks[rank].map { String($0.rawValue) }.joined(separator: ", ")
            let batch = try connection.queryFirst(
                """
                SELECT seq, record_count, body_bytes, oldest_ms FROM batch WHERE class IN (\(classes))
                ORDER BY seq LIMIT 1
                """
            ) { row in
                (
                    seq: try row.column(0, as: Int64.self), records: try row.column(1, as: Int64.self),
                    bytes: try row.column(2, as: Int64.self), oldest: try row.column(3, as: Int64.self)
                )
            }
            let record = try connection.queryFirst(
                "SELECT id, size, created_ms FROM record WHERE class IN (\(classes)) ORDER BY id LIMIT 1"
            ) { row in
                (
                    id: try row.column(0, as: Int64.self), bytes: try row.column(1, as: Int64.self),
                    created: try row.column(2, as: Int64.self)
                )
            }
            if let batch, record.map({ batch.oldest <= $0.created }) ?? true {
                try connection.execute("DELETE FROM batch WHERE seq = ?", [batch.seq])
                try countDrop(connection, .cap, records: batch.records, batches: 1, bytes: batch.bytes)
                return true
            }
            if let record {
                try connection.execute("DELETE FROM record WHERE id = ?", [record.id])
                try countDrop(connection, .cap, records: 1, batches: 0, bytes: record.bytes)
                return true
            }
        }
        return false
    }

    // MARK: - Purges and expiry

    /// Drops everything queued, counted under `reason`.
    static func purge(_ connection: SQLiteConnection, reason: DropReason) throws {
        let waiting =
            try connection.queryFirst("SELECT count(*), coalesce(sum(size), 0) FROM record") { row in
                (try row.column(0, as: Int64.self), try row.column(1, as: Int64.self))
            } ?? (0, 0)
        let sealed =
            try connection.queryFirst(
                "SELECT count(*), coalesce(sum(record_count), 0), coalesce(sum(body_bytes), 0) FROM batch"
            ) { row in
                (
                    try row.column(0, as: Int64.self), try row.column(1, as: Int64.self),
                    try row.column(2, as: Int64.self)
                )
            }
            ?? (0, 0, 0)
        try connection.execute("DELETE FROM record")
        try connection.execute("DELETE FROM batch")
        if waiting.0 + sealed.0 > 0 {
            try countDrop(
                connection, reason, records: waiting.0 + sealed.1, batches: sealed.0, bytes: waiting.1 + sealed.2)
        }
    }

    /// Drops batches and waiting records older than the policy's maximum age.
    ///
    /// - Returns: the number of batches and records dropped.
    @discardableResult
    static func expire(_ connection: SQLiteConnection, now: Int64, policy: UploadPolicy) throws -> Int64 {
        let cutoff = now - policy.maximumBatchAgeMilliseconds
        let sealed =
            try connection.queryFirst(
                """
                SELECT count(*), coalesce(sum(record_count), 0), coalesce(sum(body_bytes), 0)
                FROM batch WHERE oldest_ms < ?
                """, [cutoff]
            ) { row in
                (
                    try row.column(0, as: Int64.self), try row.column(1, as: Int64.self),
                    try row.column(2, as: Int64.self)
                )
            }
            ?? (0, 0, 0)
        let waiting =
            try connection.queryFirst(
                "SELECT count(*), coalesce(sum(size), 0) FROM record WHERE created_ms < ?", [cutoff]
            ) { row in (try row.column(0, as: Int64.self), try row.column(1, as: Int64.self)) } ?? (0, 0)
        guard sealed.0 + waiting.0 > 0 else { return 0 }
        try connection.execute("DELETE FROM batch WHERE oldest_ms < ?", [cutoff])
        try connection.execute("DELETE FROM record WHERE created_ms < ?", [cutoff])
        try countDrop(connection, .age, records: sealed.1 + waiting.0, batches: sealed.0, bytes: sealed.2 + waiting.1)
        return sealed.0 + waiting.0
    }

    // MARK: - Diagnostics

    static func countDrop(
        _ connection: SQLiteConnection, _ reason: DropReason, records: Int64, batches: Int64, bytes: Int64
    ) throws {
        try connection.execute(
            """
            INSERT INTO drop_count(reason, records, batches, bytes) VALUES (?, ?, ?, ?)
            ON CONFLICT(reason) DO UPDATE SET records = records + excluded.records,
                batches = batches + excluded.batches, bytes = bytes + excluded.bytes
            """, [reason.rawValue, records, batches, bytes])
    }

    /// The most error entries kept.
    static let errorLogCapacity: Int64 = 20

    static func logError(
        _ connection: SQLiteConnection, now: Int64, batchId: String?, status: Int?, message: String
    ) throws {
        try connection.execute(
            "INSERT INTO error_log(at_ms, batch_id, status, message) VALUES (?, ?, ?, ?)",
            [now, batchId, status, message])
        try connection.execute(
            "DELETE FROM error_log WHERE id <= (SELECT max(id) FROM error_log) - ?", [errorLogCapacity])
    }
}
