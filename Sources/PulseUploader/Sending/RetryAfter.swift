import PulseKit

/// Parses `Retry-After` (RFC 9110 §10.2.3): a number of seconds or an HTTP-date.
enum RetryAfter {
    /// The longest wait honoured; a larger value is clamped so a bad header cannot stall the queue for days.
    static let maximumMilliseconds: Int64 = 24 * 3_600 * 1_000

    /// The delay in milliseconds from `now`, or `nil` if the header is missing or malformed.
    static func delayMilliseconds(_ value: String?, now: Int64) -> Int64? {
        guard let value else { return nil }
        let trimmed = value.trimmingASCIIWhitespace()
        guard !trimmed.isEmpty else { return nil }
        if trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Seconds; anything too long to fit is "very long".
            guard let seconds = Int64(trimmed) else { return maximumMilliseconds }
            return min(seconds, maximumMilliseconds / 1_000) * 1_000
        }
        guard let date = HTTPDate.epochMilliseconds(trimmed) else { return nil }
        return min(max(0, date - now), maximumMilliseconds)
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    func trimmingASCIIWhitespace() -> String {
        var utf8 = Substring(self).utf8
        while let first = utf8.first, first == 0x20 || first == 0x09 {
            utf8 = utf8.dropFirst()
        }
        while let last = utf8.last, last == 0x20 || last == 0x09 || last == 0x0D || last == 0x0A {
            utf8 = utf8.dropLast()
        }
        return String(Substring(utf8))
    }
}
