/// Calendar arithmetic for UTC timestamps, without Foundation's locale-dependent formatters.
///
/// Used for `Apsio-Sent-At` (RFC 3339 with milliseconds), for RFC 3339 timestamps in JSON lines, and for
/// HTTP-dates in `Retry-After`.
enum CivilTime {
    /// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count since 1970-01-01 (`civil_from_days`).
    static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// `2024-05-01T12:34:56.789Z` for epoch milliseconds.
    static func rfc3339Milliseconds(_ milliseconds: Int64) -> String {
        let days = floorDivide(milliseconds, 86_400_000)
        let inDay = milliseconds - days * 86_400_000
        let (year, month, day) = civilFromDays(days)
        let hour = inDay / 3_600_000
        let minute = inDay / 60_000 % 60
        let second = inDay / 1_000 % 60
        let millis = inDay % 1_000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
            + ".\(pad(millis, 3))Z"
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// Parses an RFC 3339 date-time (`2024-05-01T12:34:56Z`, fractional seconds up to nanoseconds, `Z` or a
    /// `±hh:mm` offset; `t`/`z`/space accepted) into nanoseconds since the epoch.
    static func parseRFC3339Nanoseconds(_ text: String) -> Int64? {
        var scanner = ByteScanner(text)
        guard let year = scanner.digits(4), scanner.take(0x2D), let month = scanner.digits(2), scanner.take(0x2D),
            let day = scanner.digits(2)
        else { return nil }
        guard let separator = scanner.next(), separator == 0x54 || separator == 0x74 || separator == 0x20 else {
            return nil
        }
        guard let hour = scanner.digits(2), scanner.take(0x3A), let minute = scanner.digits(2), scanner.take(0x3A),
            let second = scanner.digits(2)
        else { return nil }
        var nanos: Int64 = 0
        if scanner.take(0x2E) {
            var count = 0
            while let digit = scanner.peekDigit() {
                scanner.advance()
                if count < 9 {
                    nanos = nanos * 10 + digit
                }
                count += 1
            }
            guard count > 0 else { return nil }
            if count < 9 {
                for _ in count..<9 {
                    nanos *= 10
                }
            }
        }
        var offsetSeconds: Int64 = 0
        guard let zone = scanner.next() else { return nil }
        if zone == 0x5A || zone == 0x7A {
            // UTC
        } else if zone == 0x2B || zone == 0x2D {
            guard let offsetHours = scanner.digits(2), scanner.take(0x3A), let offsetMinutes = scanner.digits(2),
                offsetHours < 24, offsetMinutes < 60
            else { return nil }
            offsetSeconds = (offsetHours * 3_600 + offsetMinutes * 60) * (zone == 0x2B ? 1 : -1)
        } else {
            return nil
        }
        guard scanner.atEnd, month >= 1, month <= 12, day >= 1, day <= daysInMonth(year: year, month: month),
            hour < 24, minute < 60, second <= 60
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59) - offsetSeconds
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return nil }
        return product + nanos
    }

    private static let monthNames = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]

    /// Parses an HTTP-date (RFC 9110: IMF-fixdate, plus the obsolete RFC 850 and asctime forms) into epoch
    /// milliseconds.
    static func parseHTTPDateMilliseconds(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," }).map { String($0).lowercased() }
        var day: Int64?
        var month: Int64?
        var year: Int64?
        var time: (Int64, Int64, Int64)?
        if parts.count == 6, parts[5] == "gmt" {
            // Sun, 06 Nov 1994 08:49:37 GMT
            day = Int64(parts[1])
            month = monthNames.firstIndex(of: parts[2]).map { Int64($0 + 1) }
            year = Int64(parts[3])
            time = parseClock(parts[4])
        } else if parts.count == 4, parts[3] == "gmt" {
            // Sunday, 06-Nov-94 08:49:37 GMT
            let dateParts = parts[1].split(separator: "-").map(String.init)
            guard dateParts.count == 3 else { return nil }
            day = Int64(dateParts[0])
            month = monthNames.firstIndex(of: dateParts[1]).map { Int64($0 + 1) }
            if let twoDigit = Int64(dateParts[2]) {
                year = dateParts[2].count == 2 ? (twoDigit < 70 ? 2000 + twoDigit : 1900 + twoDigit) : twoDigit
            }
            time = parseClock(parts[2])
        } else if parts.count == 5 {
            // Sun Nov  6 08:49:37 1994
            month = monthNames.firstIndex(of: parts[1]).map { Int64($0 + 1) }
            day = Int64(parts[2])
            time = parseClock(parts[3])
            year = Int64(parts[4])
        }
        guard let day, let month, let year, let time, day >= 1, day <= daysInMonth(year: year, month: month),
            year >= 1970
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return (days * 86_400 + time.0 * 3_600 + time.1 * 60 + time.2) * 1_000
    }

    private static func parseClock(_ text: String) -> (Int64, Int64, Int64)? {
        let pieces = text.split(separator: ":").map { Int64($0) }
        guard pieces.count == 3, let hour = pieces[0], let minute = pieces[1], let second = pieces[2],
            (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second)
        else { return nil }
        return (hour, minute, min(second, 59))
    }
}

/// A forward-only reader over UTF-8 bytes for the small parsers above.
private struct ByteScanner {
    private let bytes: [UInt8]
    private var position = 0

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    var atEnd: Bool { position == bytes.count }

    mutating func next() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func advance() {
        position += 1
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    func peekDigit() -> Int64? {
        guard position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 else { return nil }
        return Int64(bytes[position] - 0x30)
    }

    mutating func digits(_ count: Int) -> Int64? {
        var value: Int64 = 0
        for _ in 0..<count {
            guard let digit = peekDigit() else { return nil }
            value = value * 10 + digit
            position += 1
        }
        return value
    }
}
