/// Proleptic Gregorian calendar arithmetic in UTC, without Foundation's locale-dependent calendars
/// and formatters: the one implementation behind ``RFC3339`` and ``HTTPDate``.
package enum CivilCalendar {
    /// A date and time of day in UTC.
    struct DateTime: Equatable {
        var year: Int64
        var month: Int64
        var day: Int64
        var hour: Int64 = 0
        var minute: Int64 = 0
        var second: Int64 = 0
        var millisecond: Int64 = 0

        /// Milliseconds since 1970-01-01T00:00:00Z (the fields are taken as they are, not checked).
        var epochMilliseconds: Int64 {
            CivilCalendar.days(year: year, month: month, day: day) * 86_400_000 + hour * 3_600_000 + minute * 60_000
                + second * 1_000 + millisecond
        }
    }

    /// Days since 1970-01-01 of a date (Howard Hinnant's `days_from_civil`).
    package static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count since 1970-01-01 (`civil_from_days`).
    package static func date(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
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

    /// Whether `year` has a 29 February.
    package static func isLeapYear(_ year: Int64) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// The number of days of `month` (1–12) in `year`.
    package static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Whether year, month and day name a real date (years 0000–9999, as RFC 3339 writes them).
    package static func isValidDate(year: Int64, month: Int64, day: Int64) -> Bool {
        (0...9_999).contains(year) && (1...12).contains(month) && day >= 1
            && day <= daysInMonth(year: year, month: month)
    }

    /// Quotient and non-negative remainder (`value` = quotient × `divisor` + remainder).
    static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }
}

extension CivilCalendar.DateTime {
    /// The UTC fields of an instant given in milliseconds since 1970-01-01T00:00:00Z.
    init(epochMilliseconds: Int64) {
        let (days, inDay) = CivilCalendar.floorDivide(epochMilliseconds, 86_400_000)
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        self.init(
            year: year, month: month, day: day, hour: inDay / 3_600_000, minute: inDay / 60_000 % 60,
            second: inDay / 1_000 % 60, millisecond: inDay % 1_000)
    }
}
