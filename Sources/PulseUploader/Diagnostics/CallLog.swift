import Foundation
import PulseProtocol
import PulseStorage
import Synchronization

/// The bounded log of uploader API calls (``DiagnosticsLevel/callDetails`` and above).
///
/// Calls are appended to a ring in memory (at most ``memoryCapacity`` entries; the oldest are dropped first)
/// and written to the queue's `call_log` table in groups — when ``flushThreshold`` entries are waiting, on
/// every foreground-loop step, on ``Uploader/status()`` and on ``Uploader/close()`` — so logging costs no
/// fsync per call. The table keeps the newest ``diskCapacity`` rows. A crash loses at most the entries not
/// yet written.
final class CallLog: Sendable {
    /// The most entries held in memory.
    static let memoryCapacity = 256
    /// Entries waiting before they are written.
    static let flushThreshold = 32
    /// The most rows kept on disk.
    static let diskCapacity = 500
    /// The most stack frames kept per call.
    static let maximumFrames = 16
    /// The longest frame, call or outcome text kept, in characters.
    static let maximumText = 240

    private let pending = Mutex<[CallLogEntry]>([])

    /// Entries waiting to be written.
    var pendingCount: Int { pending.withLock { $0.count } }

    /// Appends one entry; returns whether enough are waiting to write them.
    func append(_ entry: CallLogEntry) -> Bool {
        pending.withLock { entries in
            if entries.count >= Self.memoryCapacity {
                entries.removeFirst(entries.count - Self.memoryCapacity + 1)
            }
            entries.append(entry)
            return entries.count >= Self.flushThreshold
        }
    }

    /// Takes every waiting entry.
    func take() -> [CallLogEntry] {
        pending.withLock { entries in
            defer { entries.removeAll(keepingCapacity: true) }
            return entries
        }
    }

    /// The caller's stack, without the uploader's own frames at the top, bounded.
    static func callerStack() -> [String] {
        let symbols = Thread.callStackSymbols
        // Frame 0 is this function, 1 the uploader's note-taking helper.
        return symbols.dropFirst(2).prefix(maximumFrames).map(clip)
    }

    static func clip(_ text: String) -> String {
        text.count <= maximumText ? text : String(text.prefix(maximumText)) + "…"
    }

    /// Writes `entries` and trims the table, in `connection`'s transaction.
    static func write(_ entries: [CallLogEntry], _ connection: SQLiteConnection) throws {
        for entry in entries {
            try connection.execute(
                "INSERT INTO call_log(at_ms, call, outcome, stack) VALUES (?, ?, ?, ?)",
                [entry.atMilliseconds, entry.call, entry.outcome, entry.stack.map { $0.joined(separator: "\n") }])
        }
        try connection.execute(
            "DELETE FROM call_log WHERE id <= (SELECT max(id) FROM call_log) - ?", [diskCapacity])
    }

    /// The newest `limit` entries on disk, newest first.
    static func read(_ connection: SQLiteConnection, limit: Int) throws -> [CallLogEntry] {
        try connection.query("SELECT at_ms, call, outcome, stack FROM call_log ORDER BY id DESC LIMIT ?", [limit]) {
            row in
            CallLogEntry(
                atMilliseconds: try row.column(0, as: Int64.self), call: try row.column(1, as: String.self),
                outcome: try row.column(2, as: String.self),
                stack: try row.column(3, as: String?.self).map { $0.split(separator: "\n").map(String.init) })
        }
    }
}
