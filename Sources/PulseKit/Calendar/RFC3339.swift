/// RFC 3339 date-times: the logs', status pages' and `Apsio-Sent-At`'s format, and the parser for
/// the timestamps the gateway and the uploader accept.
package enum RFC3339 {
    /// An instant as whole seconds since 1970-01-01T00:00:00Z and a fraction of 0 to 999,999,999
    /// nanoseconds after them.
    package struct Instant: Sendable, Equatable {
        package var seconds: Int64
        package var nanoseconds: Int64

        /// Milliseconds since the epoch (sub-millisecond digits dropped).
        package var epochMilliseconds: Int64 { seconds * 1_000 + nanoseconds / 1_000_000 }

        /// Nanoseconds since the epoch, or `nil` outside Int64's range (about 1677–2262).
        package var epochNanoseconds: Int64? {
            let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            guard !overflow else { return nil }
            let (sum, sumOverflow) = product.addingReportingOverflow(nanoseconds)
            return sumOverflow ? nil : sum
        }
    }

    /// `2024-05-01T12:34:56.789Z`: UTC with milliseconds, for epoch milliseconds.
    package static func format(epochMilliseconds: Int64) -> String {
        let time = CivilCalendar.DateTime(epochMilliseconds: epochMilliseconds)
        let date = [pad(time.year, 4), pad(time.month, 2), pad(time.day, 2)].joined(separator: "-")
        let clock = [pad(time.hour, 2), pad(time.minute, 2), pad(time.second, 2)].joined(separator: ":")
        return "\(date)T\(clock).\(pad(time.millisecond, 3))Z"
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.utf8.count >= width ? digits : String(repeating: "0", count: width - digits.utf8.count) + digits
    }

    /// Parses an RFC 3339 date-time: `2024-05-01T12:34:56Z`, an optional fraction of any length
    /// (digits past nanoseconds are dropped), `Z` or a `±hh:mm` offset; `t`, `z` and a space for
    /// `T` are accepted, a leap second `:60` counts as `:59`. `nil` for anything else, a date that
    /// does not exist (`2023-02-29`) included.
    package static func parse(_ text: String) -> Instant? {
        var scanner = DateTimeScanner(Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take("-"), let month = scanner.digits(2), scanner.take("-"),
            let day = scanner.digits(2), scanner.take("T") || scanner.take("t") || scanner.take(" "),
            let hour = scanner.digits(2), scanner.take(":"), let minute = scanner.digits(2), scanner.take(":"),
            let second = scanner.digits(2)
        else { return nil }
        var nanoseconds: Int64 = 0
        if scanner.take(".") {
            var count = 0
            while let digit = scanner.digit() {
                if count < 9 { nanoseconds = nanoseconds * 10 + digit }
                count += 1
            }
            guard count > 0 else { return nil }
            for _ in min(count, 9)..<9 { nanoseconds *= 10 }
        }
        var offsetSeconds: Int64 = 0
        if scanner.take("Z") || scanner.take("z") {
            offsetSeconds = 0
        } else if scanner.take("+") || scanner.take("-") {
            let sign: Int64 = scanner.previous == UInt8(ascii: "-") ? -1 : 1
            guard let offsetHours = scanner.digits(2), scanner.take(":"), let offsetMinutes = scanner.digits(2),
                offsetHours < 24, offsetMinutes < 60
            else { return nil }
            offsetSeconds = sign * (offsetHours * 3_600 + offsetMinutes * 60)
        } else {
            return nil
        }
        guard scanner.atEnd, CivilCalendar.isValidDate(year: year, month: month, day: day), hour < 24, minute < 60,
            second <= 60
        else { return nil }
        let days = CivilCalendar.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59) - offsetSeconds
        return Instant(seconds: seconds, nanoseconds: nanoseconds)
    }

    /// ``parse(_:)`` as milliseconds since the epoch.
    package static func epochMilliseconds(_ text: String) -> Int64? {
        parse(text)?.epochMilliseconds
    }

    /// ``parse(_:)`` as nanoseconds since the epoch (`nil` outside Int64's range too).
    package static func epochNanoseconds(_ text: String) -> Int64? {
        parse(text)?.epochNanoseconds
    }
}

/// A forward-only reader over the UTF-8 bytes of a date-time.
private struct DateTimeScanner {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var atEnd: Bool { position == bytes.count }

    /// The byte consumed last.
    var previous: UInt8? { position > 0 ? bytes[position - 1] : nil }

    /// Consumes `character` (ASCII) when it is next.
    mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
        position += 1
        return true
    }

    /// Consumes one decimal digit when one is next.
    mutating func digit() -> Int64? {
        guard position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 else { return nil }
        defer { position += 1 }
        return Int64(bytes[position] - 0x30)
    }

    /// Consumes exactly `count` decimal digits.
    mutating func digits(_ count: Int) -> Int64? {
        var value: Int64 = 0
        for _ in 0..<count {
            guard let digit = digit() else { return nil }
            value = value * 10 + digit
        }
        return value
    }
}
