/// Removal of sensitive values before anything reaches the outbox (see `docs/mapping.md`).
enum Redaction {
    /// The replacement for a sensitive value.
    static let placeholder = "[REDACTED]"

    /// Key fragments (lower-case) that make an attribute sensitive wherever they appear in its key.
    static let sensitiveFragments: [String] = [
        "password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "cookie", "set-cookie",
        "credential", "session_key",
    ]
    /// Every fragment's bytes back to back: fragment `i` is
    /// `fragmentBytes[fragmentStarts[i]..<fragmentStarts[i + 1]]`.
    private static let fragmentBytes: [UInt8] = sensitiveFragments.flatMap { Array($0.utf8) }
    private static let fragmentStarts: [Int] = sensitiveFragments.reduce(into: [0]) {
        $0.append($0.last! + $1.utf8.count)
    }
    /// For each byte, a bit per fragment that starts with it (either case): a position whose byte
    /// has no bit set starts no match, and one that has is compared with those fragments only.
    private static let candidates: [UInt16] = {
        precondition(sensitiveFragments.count <= 16, "one bit per fragment")
        var table = [UInt16](repeating: 0, count: 256)
        for (index, fragment) in sensitiveFragments.enumerated() {
            let first = fragment.utf8.first!
            table[Int(first)] |= 1 << index
            table[Int(first & 0xDF)] |= 1 << index
        }
        return table
    }()
    /// For each byte, a bit per fragment whose second byte it is (either case): a position is
    /// compared only with the fragments whose first two bytes it starts with.
    private static let secondCandidates: [UInt16] = {
        precondition(sensitiveFragments.allSatisfy { $0.utf8.count >= 2 }, "two bytes or more per fragment")
        var table = [UInt16](repeating: 0, count: 256)
        for (index, fragment) in sensitiveFragments.enumerated() {
            let second = Array(fragment.utf8)[1]
            table[Int(second)] |= 1 << index
            table[Int(second & 0xDF)] |= 1 << index
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
        return key.withUTF8 { isSensitive(utf8: $0) }
    }

    /// Whether the value of the key whose UTF-8 bytes are `utf8` must be replaced by the placeholder.
    static func isSensitive(utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard mayBeSensitive(utf8) else { return false }
        return candidates.withUnsafeBufferPointer { candidates in
            secondCandidates.withUnsafeBufferPointer { seconds in
                fragmentBytes.withUnsafeBufferPointer { fragments in
                    fragmentStarts.withUnsafeBufferPointer { starts in
                        // Every fragment has two bytes or more: a match starts before the last byte.
                        for start in utf8.indices.dropLast() {
                            var mask = candidates[Int(utf8[start])] & seconds[Int(utf8[start + 1])]
                            while mask != 0 {
                                let fragment = mask.trailingZeroBitCount
                                mask &= mask &- 1
                                let prefix = UnsafeBufferPointer(
                                    rebasing: fragments[starts[fragment]..<starts[fragment + 1]])
                                if startsWithIgnoringASCIICase(utf8, at: start, prefix) { return true }
                            }
                        }
                        return false
                    }
                }
            }
        }
    }

    /// The letters one of which every fragment contains (any case), with ``anchorPair``.
    static let anchorLetters: (UInt8, UInt8, UInt8) = (UInt8(ascii: "k"), UInt8(ascii: "w"), UInt8(ascii: "z"))
    /// The byte pair that the fragments without an ``anchorLetters`` letter contain (any case).
    static let anchorPair: (UInt8, UInt8) = (UInt8(ascii: "c"), UInt8(ascii: "r"))
    /// The length of the shortest fragment (`token`), as a literal: reading it costs no lazy
    /// initialization (a test checks it against ``sensitiveFragments``).
    static let shortestFragment = 5

    /// A prefilter for the fragment scan: `false` only when `utf8` holds no fragment, because it is
    /// shorter than every fragment or (from eight bytes) has none of the ``anchorLetters`` and no
    /// ``anchorPair`` in any case. Reads the key eight bytes at a time (a pair's first byte carried
    /// into the next word), the last word ending at the key's end (overlapping the one before, so
    /// it holds any pair that word ended in).
    @inline(__always)
    private static func mayBeSensitive(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = utf8.count
        guard count >= shortestFragment else { return false }
        guard count >= 8, let base = utf8.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var firsts: UInt64 = 0
        var offset = 0
        while offset + 8 <= count {
            if hasAnchor(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self), after: &firsts) { return true }
            offset += 8
        }
        firsts = 0
        return offset < count
            && hasAnchor(raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self), after: &firsts)
    }

    /// Whether the eight bytes `word` hold an anchor letter or the anchor pair (its first byte
    /// possibly the last of the word before, whose flags `firsts` holds and then holds this word's),
    /// in either case; or, rarely, seem to: a byte after a matching one can be flagged too, which
    /// only costs the scan.
    @inline(__always)
    private static func hasAnchor(_ word: UInt64, after firsts: inout UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        // Upper-case letters to lower case (other bytes change too, but none becomes a letter
        // that is not its own case pair).
        let folded = word | 0x2020_2020_2020_2020
        /// The high bit of every byte of `folded` equal to `byte` (and perhaps of bytes after one).
        func equal(_ byte: UInt8) -> UInt64 {
            let difference = folded ^ (ones &* UInt64(byte))
            return (difference &- ones) & ~difference & (ones << 7)
        }
        let letters = equal(anchorLetters.0) | equal(anchorLetters.1) | equal(anchorLetters.2)
        let pairFirsts = equal(anchorPair.0)
        let pairs = (pairFirsts << 8 | firsts >> 56) & equal(anchorPair.1)
        firsts = pairFirsts
        return letters | pairs != 0
    }

    /// Whether `text[offset...]` starts with `prefix` (lower-case ASCII), comparing ASCII letters
    /// without case.
    @inline(__always)
    private static func startsWithIgnoringASCIICase(
        _ text: UnsafeBufferPointer<UInt8>, at offset: Int, _ prefix: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        guard text.count - offset >= prefix.count else { return false }
        for index in 0..<prefix.count where lower(text[offset + index]) != prefix[index] {
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

    /// The UTF-8 bytes of ``strippingQueryAndFragment(_:)`` of an ASCII `url` (a prefix of it),
    /// found byte by byte; `nil` when `url` is not ASCII, whose characters the `String` form
    /// compares (a `?` with a combining mark after it is no separator).
    static func strippingQueryAndFragment(ascii url: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        var cut = url.count
        for (offset, byte) in url.enumerated() {
            guard byte < 0x80 else { return nil }
            if cut == url.count && (byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")) { cut = offset }
        }
        return UnsafeBufferPointer(rebasing: url[..<cut])
    }
}
