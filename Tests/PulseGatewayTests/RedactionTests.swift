import Testing

@testable import PulseGateway

/// The key test of redaction: every fragment, anywhere in the key, in any ASCII case.
@Suite struct RedactionTests {
    @Test(arguments: Redaction.sensitiveFragments)
    func everyFragmentMatchesAnywhereInAnyCase(_ fragment: String) {
        #expect(Redaction.isSensitive(fragment))
        #expect(Redaction.isSensitive("http.request.header." + fragment))
        #expect(Redaction.isSensitive(fragment.uppercased() + ".value"))
        #expect(Redaction.isSensitive("x-" + fragment.prefix(1).uppercased() + fragment.dropFirst() + "-x"))
        // One byte short of the fragment is not a match.
        #expect(!Redaction.isSensitive(String(fragment.dropLast())))
    }

    /// The scan's prefilter (anchor letters and pair, shortest length) lets every fragment through.
    @Test func thePrefilterAnchorsEveryFragment() {
        let letters = [Redaction.anchorLetters.0, Redaction.anchorLetters.1, Redaction.anchorLetters.2]
        let pair = [Redaction.anchorPair.0, Redaction.anchorPair.1]
        for fragment in Redaction.sensitiveFragments {
            let bytes = Array(fragment.utf8)
            let anchored =
                bytes.contains { letters.contains($0) } || zip(bytes, bytes.dropFirst()).contains { [$0, $1] == pair }
            #expect(anchored, "\(fragment)")
        }
        #expect(Redaction.shortestFragment == Redaction.sensitiveFragments.map(\.utf8.count).min())
    }

    /// Every fragment, and near-misses of it (a byte changed, dropped or doubled), at every offset
    /// in keys of every length up to 40 bytes, in three cases, against a plain `contains`.
    @Test func theScanAgreesWithContainsAtEveryOffsetAndLength() {
        var pieces: [String] = []
        for fragment in Redaction.sensitiveFragments {
            let bytes = Array(fragment.utf8)
            pieces.append(fragment)
            for position in bytes.indices {
                var changed = bytes
                changed[position] = changed[position] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
                pieces.append(String(decoding: changed, as: UTF8.self))
                var dropped = bytes
                dropped.remove(at: position)
                pieces.append(String(decoding: dropped, as: UTF8.self))
                var doubled = bytes
                doubled.insert(bytes[position], at: position)
                pieces.append(String(decoding: doubled, as: UTF8.self))
            }
        }
        // Padding with the pair's bytes apart and no anchor letter, so the prefilter sees only what
        // the piece brings (and what it makes with the padding next to it).
        let padding = Array("ab.c-r_d0sE".utf8)
        for piece in pieces {
            for cased in [piece, piece.uppercased(), piece.prefix(1).uppercased() + piece.dropFirst()] {
                for before in 0...16 {
                    for after in [0, 1, 2, 7, 8, 9, 16, 40 - before - cased.utf8.count] where after >= 0 {
                        let key = String(
                            decoding: padding.cycled(before) + Array(cased.utf8) + padding.reversed().cycled(after),
                            as: UTF8.self)
                        let expected = Redaction.sensitiveFragments.contains { key.lowercased().contains($0) }
                        #expect(Redaction.isSensitive(key) == expected, "\(key)")
                    }
                }
            }
        }
        for count in 0...40 {
            let plain = String(decoding: padding.cycled(count), as: UTF8.self)
            #expect(!Redaction.isSensitive(plain), "\(plain)")
        }
    }

    @Test func ordinaryKeysAreKept() {
        for key in ["", "a", "service.name", "session.id", "app.launch.type", "url.full", "pass", "tok", "api.key"] {
            #expect(!Redaction.isSensitive(key), "\(key)")
        }
        #expect(Redaction.isSensitive("cookies"))
        // Overlapping near-misses before the real fragment still find it.
        #expect(Redaction.isSensitive("passpasswd"))
        #expect(Redaction.isSensitive("sesssession_key"))
        #expect(Redaction.isSensitive("ééapikey"))
    }
}

extension Sequence {
    /// The first `count` elements of this sequence repeated.
    fileprivate func cycled(_ count: Int) -> [Element] {
        let elements = Array(self)
        return (0..<count).map { elements[$0 % elements.count] }
    }
}
