/// HTTP-dates (RFC 9110 §5.6.7), as `Retry-After` carries them.
package enum HTTPDate {
    private static let monthNames = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]

    /// Parses an HTTP-date (IMF-fixdate, plus the obsolete RFC 850 and asctime forms) into epoch
    /// milliseconds; `nil` for anything else, a date that does not exist or one before 1970.
    package static func epochMilliseconds(_ text: String) -> Int64? {
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
            time = clock(parts[4])
        } else if parts.count == 4, parts[3] == "gmt" {
            // Sunday, 06-Nov-94 08:49:37 GMT
            let dateParts = parts[1].split(separator: "-").map(String.init)
            guard dateParts.count == 3 else { return nil }
            day = Int64(dateParts[0])
            month = monthNames.firstIndex(of: dateParts[1]).map { Int64($0 + 1) }
            if let number = Int64(dateParts[2]) {
                year = dateParts[2].count == 2 ? (number < 70 ? 2000 + number : 1900 + number) : number
            }
            time = clock(parts[2])
        } else if parts.count == 5 {
            // Sun Nov  6 08:49:37 1994
            month = monthNames.firstIndex(of: parts[1]).map { Int64($0 + 1) }
            day = Int64(parts[2])
            time = clock(parts[3])
            year = Int64(parts[4])
        }
        guard let day, let month, let year, let time, year >= 1970,
            CivilCalendar.isValidDate(year: year, month: month, day: day)
        else { return nil }
        let days = CivilCalendar.days(year: year, month: month, day: day)
        return (days * 86_400 + time.0 * 3_600 + time.1 * 60 + time.2) * 1_000
    }

    private static func clock(_ text: String) -> (Int64, Int64, Int64)? {
        let pieces = text.split(separator: ":").map { Int64($0) }
        guard pieces.count == 3, let hour = pieces[0], let minute = pieces[1], let second = pieces[2],
            (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second)
        else { return nil }
        return (hour, minute, min(second, 59))
    }
}
