/// Removal of sensitive values before anything reaches the outbox (see `docs/mapping.md`).
enum Redaction {
    /// The replacement for a sensitive value.
    static let placeholder = "[REDACTED]"

    /// Key fragments (lower-case) that make an attribute sensitive wherever they appear in its key.
    static let sensitiveFragments: [String] = [
        "password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "cookie", "set-cookie",
        "credential", "session_key",
    ]
    private static let fragmentBytes: [[UInt8]] = sensitiveFragments.map { Array($0.utf8) }
    /// First letters of the fragments: a position whose byte is not one of them starts no match.
    private static let firstLetters: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for fragment in sensitiveFragments {
            let first = fragment.utf8.first!
            table[Int(first)] = true
            table[Int(first & 0xDF)] = true
        }
        return table
    }()

    /// Attributes whose value is a URL that loses its query string and fragment.
    static let urlKeys: Set<String> = ["url.full", "http.url", "http.target", "url.original"]

    /// Attributes dropped entirely.
    static let droppedKeys: Set<String> = ["url.query", "url.fragment"]

    /// Whether the value of `key` must be replaced by the placeholder.
    static func isSensitive(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { utf8 in
            for start in utf8.indices where firstLetters[Int(utf8[start])] {
                let rest = UnsafeBufferPointer(rebasing: utf8[start...])
                for fragment in fragmentBytes where startsWithIgnoringASCIICase(rest, fragment) {
                    return true
                }
            }
            return false
        }
    }

    /// Whether `text` starts with `prefix` (lower-case ASCII), comparing ASCII letters without case.
    private static func startsWithIgnoringASCIICase(_ text: UnsafeBufferPointer<UInt8>, _ prefix: [UInt8]) -> Bool {
        guard text.count >= prefix.count else { return false }
        for index in prefix.indices where lower(text[index]) != prefix[index] {
            return false
        }
        return true
    }

    @inline(__always)
    private static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// `url` without its query string and fragment (`https://h/p?q#f` → `https://h/p`).
    static func strippingQueryAndFragment(_ url: String) -> String {
        guard let cut = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        return String(url[..<cut])
    }
}
