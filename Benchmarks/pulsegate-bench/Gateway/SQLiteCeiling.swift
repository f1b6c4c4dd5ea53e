import Foundation
import PulseKit
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
    static let usage =
        "usage: pulsegate-bench sqlite-ceiling [--seconds S] [--concurrency N] [--payload-bytes B] "
        + "[--identity-bytes B] [--dir D]"

    static func run(_ arguments: [String]) async -> Bool {
        let parsed = FlagParser(
            command: "sqlite-ceiling",
            flags: [
                .value("--seconds"), .value("--concurrency"), .value("--payload-bytes"), .value("--identity-bytes"),
                .value("--dir"),
            ]
        ).parseOrExit(arguments, usage: usage)
        let (seconds, concurrency, payloadBytes, identityBytes) = FlagParser.exitOnUsageError(usage: usage) {
            () throws(UsageError) in
            (
                try parsed.number("--seconds", in: 0.001...Double.infinity, command: "sqlite-ceiling") ?? 10,
                try parsed.integer("--concurrency", in: 1...Int.max, command: "sqlite-ceiling") ?? 32,
                try parsed.integer("--payload-bytes", in: 0...Int.max, command: "sqlite-ceiling") ?? 9_000,
                try parsed.integer("--identity-bytes", in: 0...Int.max, command: "sqlite-ceiling") ?? 330
            )
        }
        let directory = parsed.value("--dir") ?? NSTemporaryDirectory() + "pulsegate-ceiling-" + UUID().uuidString
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
