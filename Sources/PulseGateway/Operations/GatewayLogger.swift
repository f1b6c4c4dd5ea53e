import PulseJSON
import PulseKit
import Synchronization

/// Log levels, least to most severe.
package enum LogLevel: String, Sendable, Equatable, Comparable, CaseIterable {
    case debug
    case info
    case warning
    case error

    private var rank: Int {
        switch self {
        case .debug: return 0
        case .info: return 1
        case .warning: return 2
        case .error: return 3
        }
    }

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}

/// Structured logs: one JSON object per line, written to a sink (standard error in `pulsegate
/// serve`).
///
/// Every line has `ts` (RFC 3339 UTC with milliseconds), `level`, `msg`, then the event's fields,
/// for example:
///
/// ```
/// {"ts":"2026-05-01T10:00:00.123Z","level":"warning","msg":"batch id conflict","app":"shop","batchId":"b-17"}
/// ```
///
/// Fields never carry payloads or secrets: ids, counts, codes, durations and error descriptions.
///
/// Logging never stops the gateway: a sink that cannot write (a full disk, a closed pipe) drops
/// the line and counts it, and ``droppedLines`` reports the count
/// (`pulsegate_log_lines_dropped_total` on `/metrics`).
package final class GatewayLogger: Sendable {
    private let sink: @Sendable (String) -> Void
    private let clock: @Sendable () -> Int64
    private let dropped: @Sendable () -> Int
    private let minimum: Mutex<LogLevel>

    /// Creates a logger writing complete lines (each ending in `\n`) to `sink`.
    ///
    /// - Parameters:
    ///   - level: the least severe level written.
    ///   - clock: epoch milliseconds for `ts`.
    ///   - droppedLines: how many lines the sink could not write so far (for a sink that cannot
    ///     fail, `0`).
    ///   - sink: receives each line; called concurrently, must be thread-safe, and must not fail
    ///     the caller when it cannot write (drop and count instead).
    package init(
        level: LogLevel = .info, clock: @escaping @Sendable () -> Int64 = { PulseClock.system.wallClockMilliseconds() },
        droppedLines: @escaping @Sendable () -> Int = { 0 }, sink: @escaping @Sendable (String) -> Void
    ) {
        self.sink = sink
        self.clock = clock
        self.dropped = droppedLines
        self.minimum = Mutex(level)
    }

    /// Lines the sink could not write so far.
    package var droppedLines: Int { dropped() }

    /// A logger that writes nothing.
    package static let disabled = GatewayLogger(level: .error) { _ in }

    /// The least severe level written; changed by a SIGHUP reload.
    package var level: LogLevel {
        get { minimum.withLock { $0 } }
        set { minimum.withLock { $0 = newValue } }
    }

    /// Writes one line when `level` is at or above the logger's level.
    package func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard level >= self.level else { return }
        var writer = JSONWriter(capacity: 160)
        writer.beginObject()
        writer.key("ts")
        writer.string(RFC3339.format(epochMilliseconds: clock()))
        writer.key("level")
        writer.string(level.rawValue)
        writer.key("msg")
        writer.string(message)
        for (key, value) in fields {
            writer.key(key)
            writer.string(value)
        }
        writer.endObject()
        var line = writer.bytes
        line.append(0x0A)
        sink(String(decoding: line, as: UTF8.self))
    }

    /// `debug` line.
    package func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.debug, message, fields)
    }

    /// `info` line.
    package func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.info, message, fields)
    }

    /// `warning` line.
    package func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.warning, message, fields)
    }

    /// `error` line.
    package func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.error, message, fields)
    }
}
