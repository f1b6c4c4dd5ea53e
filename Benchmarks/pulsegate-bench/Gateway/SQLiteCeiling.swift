import Foundation
import PulseStorage
import Synchronization

/// `pulsegate-bench sqlite-ceiling`: the raw group-commit ceiling of this machine's disk, for the
/// gateway benchmark's ratio. 32 tasks (by default) loop over `SQLiteExecutor.commit`, each job
/// inserting what one gateway intake writes — a dedup row and an outbox row with a payload of the
/// same size — with nothing else on the path (no HTTP, no parsing, no mapping).
enum SQLiteCeiling {
    static func run(_ arguments: [String]) async -> Bool {
        var seconds = 10.0
        var concurrency = 32
        var payloadBytes = 9_000
        var directory = NSTemporaryDirectory() + "pulsegate-ceiling-" + UUID().uuidString
        var index = 0
        while index + 1 < arguments.count {
            let value = arguments[index + 1]
            switch arguments[index] {
            case "--seconds": seconds = Double(value) ?? seconds
            case "--concurrency": concurrency = Int(value) ?? concurrency
            case "--payload-bytes": payloadBytes = Int(value) ?? payloadBytes
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
                        first_seen INTEGER NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (app, batch_id))
                        WITHOUT ROWID;
                    CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, app TEXT NOT NULL,
                        identity_key TEXT NOT NULL, payload BLOB NOT NULL, created_at INTEGER NOT NULL);
                    CREATE INDEX outbox_by_identity ON outbox(identity_key, seq);
                    """)
                return true
            }
            let payload = (0..<payloadBytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
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
                                    try connection.execute(
                                        "INSERT INTO dedup(app, batch_id, body_hash, first_seen, expires_at) VALUES (?, ?, ?, ?, ?)",
                                        ["shop", id, hash, 1, 2])
                                    try connection.execute(
                                        "INSERT INTO outbox(app, identity_key, payload, created_at) VALUES (?, ?, ?, ?)",
                                        ["shop", "identity", payload, 1])
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
