import Foundation
import PulseStorage
import Synchronization

/// `pulsegate-bench sqlite-ceiling`: the raw group-commit ceiling of this machine's disk, for the
/// gateway benchmark's ratio. 32 tasks (by default) loop over `SQLiteExecutor.commit`, each job
/// doing what one gateway intake does in its job — look the batch id up in `dedup`, insert the
/// dedup row, insert an outbox row (with a CONNECT identity and a payload of the size the gateway
/// stores) into tables shaped like the gateway's, with the same indexes — and nothing else on the
/// path (no HTTP, no parsing, no mapping, no compression). The payload bytes are incompressible, so
/// `--payload-bytes` is exactly what each row stores.
enum SQLiteCeiling {
    static func run(_ arguments: [String]) async -> Bool {
        var seconds = 10.0
        var concurrency = 32
        var payloadBytes = 9_000
        var identityBytes = 330
        var directory = NSTemporaryDirectory() + "pulsegate-ceiling-" + UUID().uuidString
        var index = 0
        while index + 1 < arguments.count {
            let value = arguments[index + 1]
            switch arguments[index] {
            case "--seconds": seconds = Double(value) ?? seconds
            case "--concurrency": concurrency = Int(value) ?? concurrency
            case "--payload-bytes": payloadBytes = Int(value) ?? payloadBytes
            case "--identity-bytes": identityBytes = Int(value) ?? identityBytes
            case "--dir": directory = value
            default:
                print("unknown option \(arguments[index])")
                return false
            }
            index += 2
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let executor = try await SQLiteExecutor(path: directory + "/ceiling.sqlite")
            _ = try await executor.write { connection in
                try connection.executeScript(
                    """
                    CREATE TABLE dedup (app TEXT NOT NULL, batch_id TEXT NOT NULL, body_hash BLOB NOT NULL,
                        first_seen INTEGER NOT NULL, expires_at INTEGER NOT NULL, sent_at INTEGER,
                        duplicates INTEGER NOT NULL DEFAULT 0, conflicts INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (app, batch_id)) WITHOUT ROWID;
                    CREATE INDEX dedup_by_expiry ON dedup(expires_at);
                    CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, app TEXT NOT NULL,
                        identity_key TEXT NOT NULL, identity BLOB NOT NULL, kind INTEGER NOT NULL,
                        priority INTEGER NOT NULL, pulse_batch_id TEXT NOT NULL, payload BLOB NOT NULL,
                        compression INTEGER NOT NULL, record_count INTEGER NOT NULL, fallback BLOB,
                        http_batch_id TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
                        next_attempt_at INTEGER NOT NULL, created_at INTEGER NOT NULL, last_error TEXT,
                        payload_encoding INTEGER NOT NULL DEFAULT 0, payload_bytes INTEGER NOT NULL DEFAULT 0);
                    CREATE INDEX outbox_by_identity ON outbox(identity_key, priority, seq);
                    """)
                return true
            }
            var generator = SystemRandomNumberGenerator()
            let payload = (0..<payloadBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let identity = [UInt8](repeating: 0x61, count: identityBytes)
            let identityKey = String(repeating: "f", count: 32)
            let hash = [UInt8](repeating: 0xAB, count: 32)
            let counter = Counter()
            let clock = ContinuousClock()
            let deadline = clock.now + .milliseconds(Int(seconds * 1000))
            let start = clock.now
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<concurrency {
                    group.addTask {
                        var sequence = 0
                        while clock.now < deadline {
                            sequence += 1
                            let id = "ceiling-\(worker)-\(sequence)"
                            do {
                                try await executor.commit { connection in
                                    let known = try connection.queryFirst(
                                        "SELECT body_hash, expires_at FROM dedup WHERE app = ? AND batch_id = ?",
                                        ["shop", id]
                                    ) { row in try row.column(1, as: Int64.self) }
                                    guard known == nil else { return }
                                    try connection.execute(
                                        """
                                        INSERT INTO dedup(app, batch_id, body_hash, first_seen, expires_at, sent_at)
                                        VALUES (?, ?, ?, ?, ?, ?)
                                        """,
                                        ["shop", id, hash, 1, 2, nil])
                                    try connection.execute(
                                        """
                                        INSERT INTO outbox(app, identity_key, identity, kind, priority, pulse_batch_id,
                                            payload, compression, record_count, fallback, http_batch_id,
                                            next_attempt_at, created_at, payload_encoding, payload_bytes)
                                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                                        """,
                                        [
                                            "shop", identityKey, identity, 1, 1, identityKey, payload, 1, 20,
                                            nil, id, 1, 1, 1, payload.count * 5,
                                        ])
                                }
                                counter.value.add(1, ordering: .relaxed)
                            } catch {
                                return
                            }
                        }
                    }
                }
            }
            let elapsed = clock.now - start
            let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let statistics = executor.statistics
            try await executor.close()
            let rate = Double(counter.value.load(ordering: .relaxed)) / elapsedSeconds
            print(
                "sqlite-ceiling: \(Int(rate)) commits/s (\(concurrency) tasks, \(payloadBytes)-byte payloads, "
                    + "\(statistics.groupCommits) fsyncs, largest group \(statistics.largestGroupCommit))")
            return true
        } catch {
            print("sqlite-ceiling failed: \(error)")
            return false
        }
    }
}

/// A shared commit counter.
private final class Counter: Sendable {
    let value = Atomic<Int>(0)
}
