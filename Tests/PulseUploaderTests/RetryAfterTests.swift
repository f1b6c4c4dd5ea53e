import Testing

@testable import PulseUploader

@Suite struct RetryAfterTests {
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
