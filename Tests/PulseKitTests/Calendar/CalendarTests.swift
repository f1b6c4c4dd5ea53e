import Testing

@testable import PulseKit

@Suite struct CivilCalendarTests {
    @Test func dayCountsRoundTripAcrossEraAndLeapBoundaries() {
        #expect(CivilCalendar.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilCalendar.days(year: 2000, month: 3, day: 1) == 11_017)
        #expect(CivilCalendar.days(year: 1969, month: 12, day: 31) == -1)
        for days in stride(from: Int64(-800_000), through: 800_000, by: 997) {
            let (year, month, day) = CivilCalendar.date(fromDays: days)
            #expect(CivilCalendar.isValidDate(year: year, month: month, day: day) || year < 0 || year > 9_999)
            #expect(CivilCalendar.days(year: year, month: month, day: day) == days)
        }
    }

    @Test func leapYearsAndMonthLengths() {
        #expect(CivilCalendar.isLeapYear(2000))
        #expect(!CivilCalendar.isLeapYear(1900))
        #expect(CivilCalendar.isLeapYear(2024))
        #expect(CivilCalendar.daysInMonth(year: 2023, month: 2) == 28)
        #expect(CivilCalendar.daysInMonth(year: 2024, month: 2) == 29)
        #expect(CivilCalendar.daysInMonth(year: 2024, month: 4) == 30)
        #expect(CivilCalendar.daysInMonth(year: 2024, month: 12) == 31)
        #expect(!CivilCalendar.isValidDate(year: 2023, month: 2, day: 29))
        #expect(!CivilCalendar.isValidDate(year: 2023, month: 13, day: 1))
        #expect(!CivilCalendar.isValidDate(year: 2023, month: 1, day: 0))
    }

    @Test func dateTimeFieldsOfInstantsBeforeAndAfterTheEpoch() {
        let before = CivilCalendar.DateTime(epochMilliseconds: -1)
        #expect(
            before
                == CivilCalendar.DateTime(
                    year: 1969, month: 12, day: 31, hour: 23, minute: 59, second: 59, millisecond: 999))
        #expect(before.epochMilliseconds == -1)
        let after = CivilCalendar.DateTime(epochMilliseconds: 1_700_000_000_123)
        #expect(
            after
                == CivilCalendar.DateTime(
                    year: 2023, month: 11, day: 14, hour: 22, minute: 13, second: 20, millisecond: 123))
        #expect(after.epochMilliseconds == 1_700_000_000_123)
    }
}

@Suite struct RFC3339Tests {
    @Test func formatsUTCWithMilliseconds() {
        #expect(RFC3339.format(epochMilliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.format(epochMilliseconds: 1_700_000_000_123) == "2023-11-14T22:13:20.123Z")
        #expect(RFC3339.format(epochMilliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(RFC3339.format(epochMilliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(RFC3339.format(epochMilliseconds: 253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
    }

    @Test func parsesOffsetsFractionsAndLowercase() {
        #expect(RFC3339.epochNanoseconds("2023-11-14T22:13:20.123Z") == 1_700_000_000_123_000_000)
        #expect(RFC3339.epochNanoseconds("2023-11-14T23:13:20.000000001+01:00") == 1_700_000_000_000_000_001)
        #expect(RFC3339.epochNanoseconds("2023-11-14t22:13:20z") == 1_700_000_000_000_000_000)
        #expect(RFC3339.epochNanoseconds("2023-11-14 22:13:20Z") == 1_700_000_000_000_000_000)
        #expect(RFC3339.epochMilliseconds("2023-11-14T22:13:20.1234567Z") == 1_700_000_000_123)
        #expect(RFC3339.epochMilliseconds("2023-11-15T00:13:20+02:00") == 1_700_000_000_000)
        #expect(RFC3339.epochMilliseconds("2023-11-14T21:13:20-01:00") == 1_700_000_000_000)
        #expect(RFC3339.epochMilliseconds("1969-12-31T23:59:59Z") == -1_000)
        #expect(RFC3339.epochMilliseconds("1969-12-31T23:59:59.5Z") == -500)
        // A leap second counts as the second before it.
        #expect(RFC3339.epochMilliseconds("2016-12-31T23:59:60Z") == RFC3339.epochMilliseconds("2016-12-31T23:59:59Z"))
        // Past Int64 nanoseconds the instant still parses, as seconds and milliseconds.
        #expect(RFC3339.parse("3000-01-01T00:00:00Z") == RFC3339.Instant(seconds: 32_503_680_000, nanoseconds: 0))
        #expect(RFC3339.epochNanoseconds("3000-01-01T00:00:00Z") == nil)
    }

    @Test(arguments: [
        "", "yesterday", "2023-11-14", "2023-11-14T22:13:20", "2023-11-14T22:13:20.Z", "2023-02-29T00:00:00Z",
        "2023-13-14T22:13:20Z", "2023-11-14T24:00:00Z", "2023-11-14T22:60:00Z", "2023-11-14T22:13:61Z",
        "2023-11-14T22:13:20+24:00", "2023-11-14T22:13:20+01:60", "2023-11-14T22:13:20+0100", "2023-11-14X22:13:20Z",
        "2023-11-14T22:13:20Zjunk", "+2023-11-14T22:13:20Z",
    ])
    func rejects(text: String) {
        #expect(RFC3339.parse(text) == nil)
    }

    @Test func formatThenParseIsTheIdentityOnMilliseconds() {
        for milliseconds in [Int64(0), 1, -1, 951_782_400_000, 1_700_000_000_123, 4_102_444_800_000] {
            #expect(RFC3339.epochMilliseconds(RFC3339.format(epochMilliseconds: milliseconds)) == milliseconds)
        }
    }
}

@Suite struct HTTPDateTests {
    @Test func parsesTheThreeForms() {
        let expected: Int64 = 784_111_777_000
        #expect(HTTPDate.epochMilliseconds("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.epochMilliseconds("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.epochMilliseconds("Sun Nov  6 08:49:37 1994") == expected)
    }

    @Test(arguments: [
        "Sun, 31 Feb 1994 08:49:37 GMT", "soon", "Sun, 06 Nov 1969 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
    ])
    func rejects(text: String) {
        #expect(HTTPDate.epochMilliseconds(text) == nil)
    }
}
