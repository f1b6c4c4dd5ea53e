import PulseJSON
import PulseKit
import Synchronization

/// Log levels, least to most severe.
public enum LogLevel: String, Sendable, Equatable, Comparable, CaseIterable {
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

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
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
public final class GatewayLogger: Sendable {
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
    public init(
        level: LogLevel = .info, clock: @escaping @Sendable () -> Int64 = { PulseClock.system.wallClockMilliseconds() },
        droppedLines: @escaping @Sendable () -> Int = { 0 }, sink: @escaping @Sendable (String) -> Void
    ) {
        self.sink = sink
        self.clock = clock
        self.dropped = droppedLines
        self.minimum = Mutex(level)
    }

    /// Lines the sink could not write so far.
    public var droppedLines: Int { dropped() }

    /// A logger that writes nothing.
    public static let disabled = GatewayLogger(level: .error) { _ in }

    /// The least severe level written; changed by a SIGHUP reload.
    public var level: LogLevel {
        get { minimum.withLock { $0 } }
        set { minimum.withLock { $0 = newValue } }
    }

    /// Writes one line when `level` is at or above the logger's level.
    public func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard level >= self.level else { return }
        var writer = JSONWriter(capacity: 160)
        writer.beginObject()
        writer.key("ts")
        writer.string(Self.timestamp(clock()))
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
    public func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.debug, message, fields)
    }

    /// `info` line.
    public func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.info, message, fields)
    }

    /// `warning` line.
    public func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.warning, message, fields)
    }

    /// `error` line.
    public func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.error, message, fields)
    }

    /// RFC 3339 UTC with milliseconds for an epoch-milliseconds instant.
    static func timestamp(_ milliseconds: Int64) -> String {
        let civil = CivilTime(epochMilliseconds: milliseconds)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(civil.year, 4))-\(pad(civil.month, 2))-\(pad(civil.day, 2))T\(pad(civil.hour, 2)):"
            + "\(pad(civil.minute, 2)):\(pad(civil.second, 2)).\(pad(civil.millisecond, 3))Z"
    }
}

/// UTC calendar fields of an epoch-milliseconds instant, and back (proleptic Gregorian).
struct CivilTime: Equatable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int
    var millisecond: Int

    init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, millisecond: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.millisecond = millisecond
    }

    init(epochMilliseconds: Int64) {
        let (days, msOfDay) = Self.floorDivide(epochMilliseconds, 86_400_000)
        let (year, month, day) = Self.civil(fromDays: Int(days))
        let ms = Int(msOfDay)
        self.init(
            year: year, month: month, day: day, hour: ms / 3_600_000, minute: ms / 60_000 % 60,
            second: ms / 1000 % 60, millisecond: ms % 1000)
    }

    /// Milliseconds since the epoch.
    var epochMilliseconds: Int64 {
        let days = Int64(Self.days(year: year, month: month, day: day))
        return days * 86_400_000 + Int64(hour) * 3_600_000 + Int64(minute) * 60_000 + Int64(second) * 1000
            + Int64(millisecond)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }

    /// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
