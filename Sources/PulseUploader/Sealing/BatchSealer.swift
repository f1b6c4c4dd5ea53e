import PulseProtocol
import PulseStorage

/// Seals waiting records into immutable batches.
///
/// Sealing takes a group's records in arrival order, builds the OTLP JSON body once, compresses it, gives it
/// a fresh `Apsio-Batch-Id`, stores body + encoding + signal, and deletes the records — all in one
/// transaction, so a record is either waiting or in exactly one batch, never both and never lost. A sealed
/// batch is never rewritten: retries send its stored bytes with its stored id.
struct BatchSealer {
    let policy: UploadPolicy
    let random: RandomSource
    /// Who this uploader is, for the diagnostics record; `nil` seals without one (sequence numbers are still
    /// assigned).
    var diagnostics: DiagnosticsIdentity?

    /// The facts of the diagnostics record that do not come from the queue.
    struct DiagnosticsIdentity: Sendable {
        /// The uploader's current resource: the record joins that resource's entry in the batch.
        var resourceId: Int64
        var deviceId: String
        var installationId: String
        var appVersion: String?
    }

    init(policy: UploadPolicy, random: RandomSource, diagnostics: DiagnosticsIdentity? = nil) {
        self.policy = policy
        self.random = random
        self.diagnostics = diagnostics
    }

    /// A summary of one sealed batch.
    struct Sealed: Sendable, Equatable {
        var batchId: String
        /// The batch's per-installation sequence number (`Apsio-Batch-Sequence`).
        var sequence: Int64
        /// Whether a diagnostics record was attached.
        var hasDiagnosticsRecord: Bool
        var signal: Signal
        var recordClass: RecordClass
        var records: Int
        var rawBytes: Int
        var bodyBytes: Int
        var background: Bool
        var trigger: SealTrigger
    }

    /// Seals what is due at `now`.
    ///
    /// - Parameter force: seal every waiting record (background transition, flush) instead of only the groups
    ///   whose size or interval trigger fired.
    func seal(_ connection: SQLiteConnection, now: Int64, force: SealTrigger?) throws -> [Sealed] {
        let groups = try connection.query(
            "SELECT signal, class, records, bytes FROM pending_group WHERE records > 0 ORDER BY class DESC, signal"
        ) { row in
            (
                try row.column(0, as: Int.self), try row.column(1, as: Int.self), try row.column(2, as: Int64.self),
                try row.column(3, as: Int64.self)
            )
        }
        var sealed: [Sealed] = []
        for (signalRaw, classRaw, records, bytes) in groups {
            guard let signal = Signal(storageCode: signalRaw), let recordClass = RecordClass(rawValue: classRaw) else {
                continue
            }
            let trigger: SealTrigger
            var onlyFullBatches = false
            if let force {
                trigger = force
            } else if recordClass == .crash || recordClass == .attachment {
                trigger = .immediate
            } else if let oldest = try oldestCreated(connection, signal: signal, recordClass: recordClass),
                now - oldest >= policy.sealIntervalMilliseconds || oldest > now
            {
                // `oldest > now`: the wall clock stepped back past the record; waiting for the clock to catch
                // up would park the group for as long as the step.
                trigger = .interval
            } else if records >= Int64(policy.maximumBatchRecords) || bytes >= Int64(policy.maximumBatchBytes) {
                trigger = .size
                onlyFullBatches = true
            } else {
                continue
            }
            sealed += try sealGroup(
                connection, signal: signal, recordClass: recordClass, now: now, trigger: trigger,
                onlyFullBatches: onlyFullBatches)
        }
        return sealed
    }

    /// The earliest deadline at which an interval trigger fires, if any record is waiting.
    func nextSealDeadline(_ connection: SQLiteConnection) throws -> Int64? {
        let oldest = try connection.queryFirst("SELECT min(created_ms) FROM record") { row in
            try row.column(0, as: Int64?.self)
        }
        guard let oldest = oldest ?? nil else { return nil }
        return oldest + policy.sealIntervalMilliseconds
    }

    private func oldestCreated(_ connection: SQLiteConnection, signal: Signal, recordClass: RecordClass) throws
        -> Int64?
    {
        try connection.queryFirst(
            "SELECT min(created_ms) FROM record WHERE signal = ? AND class = ?",
            [signal.storageCode, recordClass.rawValue]
        ) { row in try row.column(0, as: Int64?.self) } ?? nil
    }

    private struct Row {
        var id: Int64
        var resourceId: Int64
        var created: Int64
        var fragment: [UInt8]
    }

    private func sealGroup(
        _ connection: SQLiteConnection, signal: Signal, recordClass: RecordClass, now: Int64, trigger: SealTrigger,
        onlyFullBatches: Bool
    ) throws -> [Sealed] {
        var sealed: [Sealed] = []
        let perBatch = recordClass == .attachment ? 1 : policy.maximumBatchRecords
        var afterId: Int64 = 0
        while true {
            let rows = try connection.query(
                """
                SELECT id, resource_id, created_ms, fragment FROM record
                WHERE signal = ? AND class = ? AND id > ? ORDER BY id LIMIT ?
                """, [signal.storageCode, recordClass.rawValue, afterId, perBatch]
            ) { row in
                Row(
                    id: try row.column(0, as: Int64.self), resourceId: try row.column(1, as: Int64.self),
                    created: try row.column(2, as: Int64.self), fragment: try row.column(3, as: [UInt8].self))
            }
            guard !rows.isEmpty else { break }
            // The largest FIFO prefix that fits the byte limit (at least one record: an attachment, or a record
            // accepted under an earlier, larger limit).
            var taken = 0
            var takenBytes = 0
            for row in rows {
                if taken > 0 && takenBytes + row.fragment.count > policy.maximumBatchBytes {
                    break
                }
                taken += 1
                takenBytes += row.fragment.count
            }
            let full = taken < rows.count || rows.count == perBatch || takenBytes >= policy.maximumBatchBytes
            if onlyFullBatches && !full {
                break
            }
            let chosen = Array(rows[0..<taken])
            sealed.append(
                try storeBatch(
                    connection, rows: chosen, signal: signal, recordClass: recordClass, now: now, trigger: trigger))
            afterId = chosen[chosen.count - 1].id
        }
        return sealed
    }

    private func storeBatch(
        _ connection: SQLiteConnection, rows: [Row], signal: Signal, recordClass: RecordClass, now: Int64,
        trigger: SealTrigger
    ) throws -> Sealed {
        var groups: [BatchBodyBuilder.ResourceGroup] = []
        var groupIndex: [Int64: Int] = [:]
        for row in rows {
            if let index = groupIndex[row.resourceId] {
                groups[index].fragments.append(row.fragment)
                continue
            }
            let attributes =
                try connection.queryFirst("SELECT attributes FROM resource WHERE id = ?", [row.resourceId]) { row in
                    try row.column(0, as: [UInt8].self)
                } ?? Array("[]".utf8)
            groupIndex[row.resourceId] = groups.count
            groups.append(BatchBodyBuilder.ResourceGroup(attributes: attributes, fragments: [row.fragment]))
        }
        let sequence = try DiagnosticsStore.nextSequence(connection)
        var attached = false
        if let diagnostics, policy.diagnosticsLevel >= .batchSummaries {
            let content = DiagnosticsRecord.Content(
                level: policy.diagnosticsLevel, sequence: sequence, snapshot: try DiagnosticsStore.snapshot(connection),
                deviceId: diagnostics.deviceId, installationId: diagnostics.installationId,
                appVersion: diagnostics.appVersion, timeNanos: now &* 1_000_000)
            let fragment = DiagnosticsRecord.fragment(content, signal: signal, random: random)
            if let index = groupIndex[diagnostics.resourceId] {
                groups[index].fragments.append(fragment)
            } else {
                let attributes =
                    try connection.queryFirst("SELECT attributes FROM resource WHERE id = ?", [diagnostics.resourceId])
                {
                    row in try row.column(0, as: [UInt8].self)
                } ?? Array("[]".utf8)
                groups.append(BatchBodyBuilder.ResourceGroup(attributes: attributes, fragments: [fragment]))
            }
            attached = true
        }
        let raw = BatchBodyBuilder.build(signal: signal, groups: groups)
        let body = try BodyCompression.compress(raw, encoding: policy.encoding)
        let batchId = random.identifier()
        let oldest = rows.map(\.created).min() ?? now
        let background = recordClass == .crash || recordClass == .attachment || body.count >= policy.largeUploadBytes
        try connection.execute(
            """
            INSERT INTO batch(batch_id, signal, class, background, sealed_ms, oldest_ms, record_count, raw_bytes,
                encoding, body, body_bytes, next_attempt_ms, sequence)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                batchId, signal.storageCode, recordClass.rawValue, background ? 1 : 0, now, oldest, rows.count,
                raw.count, policy.encoding.rawValue, body, body.count, now, sequence,
            ])
        try connection.execute(
            "DELETE FROM record WHERE signal = ? AND class = ? AND id >= ? AND id <= ?",
            [signal.storageCode, recordClass.rawValue, rows[0].id, rows[rows.count - 1].id])
        return Sealed(
            batchId: batchId, sequence: sequence, hasDiagnosticsRecord: attached, signal: signal,
            recordClass: recordClass, records: rows.count, rawBytes: raw.count,
            bodyBytes: body.count, background: background, trigger: trigger)
    }
}
