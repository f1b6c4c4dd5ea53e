import Testing

@testable import PulseUploader

@Suite struct CivilTimeTests {
    @Test func formatsRFC3339WithMillisecondsInUTC() {
        #expect(CivilTime.rfc3339Milliseconds(0) == "1970-01-01T00:00:00.000Z")
        #expect(CivilTime.rfc3339Milliseconds(1_700_000_000_123) == "2023-11-14T22:13:20.123Z")
        #expect(CivilTime.rfc3339Milliseconds(951_782_400_000) == "2000-02-29T00:00:00.000Z")
    }

    @Test func parsesRFC3339WithOffsetsAndFractions() {
        #expect(CivilTime.parseRFC3339Nanoseconds("2023-11-14T22:13:20.123Z") == 1_700_000_000_123_000_000)
        #expect(CivilTime.parseRFC3339Nanoseconds("2023-11-14T23:13:20.000000001+01:00") == 1_700_000_000_000_000_001)
        #expect(CivilTime.parseRFC3339Nanoseconds("2023-11-14t22:13:20z") == 1_700_000_000_000_000_000)
        #expect(CivilTime.parseRFC3339Nanoseconds("2023-02-29T00:00:00Z") == nil)
        #expect(CivilTime.parseRFC3339Nanoseconds("2023-11-14T22:13:20") == nil)
        #expect(CivilTime.parseRFC3339Nanoseconds("2023-11-14T22:13:20.Z") == nil)
        #expect(CivilTime.parseRFC3339Nanoseconds("yesterday") == nil)
    }

    @Test func parsesTheThreeHTTPDateForms() {
        let expected: Int64 = 784_111_777_000
        #expect(CivilTime.parseHTTPDateMilliseconds("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(CivilTime.parseHTTPDateMilliseconds("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(CivilTime.parseHTTPDateMilliseconds("Sun Nov  6 08:49:37 1994") == expected)
        #expect(CivilTime.parseHTTPDateMilliseconds("Sun, 31 Feb 1994 08:49:37 GMT") == nil)
        #expect(CivilTime.parseHTTPDateMilliseconds("soon") == nil)
    }

    @Test func retryAfterAcceptsSecondsAndDates() {
        let now: Int64 = 784_111_777_000
        #expect(RetryAfter.delayMilliseconds("120", now: now) == 120_000)
        #expect(RetryAfter.delayMilliseconds(" 0 ", now: now) == 0)
        #expect(RetryAfter.delayMilliseconds("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == 60_000)
        // A date in the past means "now".
        #expect(RetryAfter.delayMilliseconds("Sun, 06 Nov 1994 08:48:37 GMT", now: now) == 0)
        #expect(RetryAfter.delayMilliseconds("99999999999999999999", now: now) == RetryAfter.maximumMilliseconds)
        #expect(RetryAfter.delayMilliseconds("-5", now: now) == nil)
        #expect(RetryAfter.delayMilliseconds("", now: now) == nil)
        #expect(RetryAfter.delayMilliseconds(nil, now: now) == nil)
    }
}
