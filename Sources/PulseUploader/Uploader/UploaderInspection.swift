import OTLPProtobuf
import PulseJSON
import PulseStorage

/// Read-only views of the queue's contents for tests, benchmarks and troubleshooting (not public API).
extension Uploader {
    /// A stored batch as it will be sent.
    struct StoredBatch: Sendable, Equatable {
        var batchId: String
        var signal: Signal
        var recordClass: RecordClass
        var encoding: BodyEncoding
        var body: [UInt8]
        var records: Int
        var attempts: Int
        var nextAttemptMilliseconds: Int64
        var background: Bool
        var sequence: Int64?
    }

    /// Every sealed batch, oldest first.
    func storedBatches() async throws -> [StoredBatch] {
        try await executor.read { connection in
            try connection.query(
                """
                SELECT batch_id, signal, class, encoding, body, record_count, attempts, next_attempt_ms, background,
                    sequence
                FROM batch ORDER BY seq
                """
            ) { row in
                StoredBatch(
                    batchId: try row.column(0, as: String.self),
                    signal: Signal(storageCode: try row.column(1, as: Int.self)) ?? .logs,
                    recordClass: RecordClass(rawValue: try row.column(2, as: Int.self)) ?? .standard,
                    encoding: BodyEncoding(rawValue: try row.column(3, as: String.self)) ?? .gzip,
                    body: try row.column(4, as: [UInt8].self), records: try row.column(5, as: Int.self),
                    attempts: try row.column(6, as: Int.self),
                    nextAttemptMilliseconds: try row.column(7, as: Int64.self),
                    background: try row.column(8, as: Int.self) == 1, sequence: try row.column(9, as: Int64?.self))
            }
        }
    }

    /// Rows in the call log on disk.
    func callLogRows() async throws -> Int {
        try await executor.read { connection in
            try connection.queryFirst("SELECT count(*) FROM call_log") { row in try row.column(0, as: Int.self) } ?? 0
        }
    }

    /// Call-log entries waiting in memory.
    var pendingCallLogEntries: Int { callLogPendingCount }

    /// The ids of every record in the queue: waiting records' ids and the ids found inside sealed batches
    /// (`log.record.uid`, `traceId + spanId`, metric series keys).
    func queuedRecordIds() async throws -> Set<String> {
        var ids = Set(
            try await executor.read { connection in
                try connection.query("SELECT record_id FROM record") { row in try row.column(0, as: String.self) }
            })
        for batch in try await storedBatches() {
            let raw = try BodyCompression.decompress(batch.body, encoding: batch.encoding)
            ids.formUnion(try Uploader.recordIds(inBody: raw, signal: batch.signal))
        }
        return ids
    }

    private static func elements(_ node: JSONNode?) -> [JSONNode] {
        node.map { Array($0.elements) } ?? []
    }

    /// The record ids inside an uncompressed OTLP JSON body (the diagnostics record excluded).
    static func recordIds(inBody body: [UInt8], signal: Signal) throws -> [String] {
        let document = try JSONParser().parse(body)
        var ids: [String] = []
        let keys: (String, String, String) =
            switch signal {
            case .logs: ("resourceLogs", "scopeLogs", "logRecords")
            case .traces: ("resourceSpans", "scopeSpans", "spans")
            case .metrics: ("resourceMetrics", "scopeMetrics", "metrics")
            }
        for resource in elements(document.root[keys.0]) {
            for scope in elements(resource[keys.1]) {
                for item in elements(scope[keys.2]) {
                    // The diagnostics record is not a queued record.
                    if (item["eventName"]?.string ?? item["name"]?.string) == DiagnosticsRecord.eventName {
                        continue
                    }
                    switch signal {
                    case .logs:
                        for attribute in elements(item["attributes"])
                        where attribute["key"]?.string == RecordEncoder.recordUIDKey {
                            if let uid = attribute["value"]?["stringValue"]?.string { ids.append(uid) }
                        }
                    case .traces:
                        ids.append((item["traceId"]?.string ?? "") + (item["spanId"]?.string ?? ""))
                    case .metrics:
                        let name = item["name"]?.string ?? ""
                        let point = (item["gauge"] ?? item["sum"])?["dataPoints"]?[0]
                        ids.append(
                            "\(name)|\(point?["startTimeUnixNano"]?.string ?? "")|\(point?["timeUnixNano"]?.string ?? "")"
                        )
                    }
                }
            }
        }
        return ids
    }
}
