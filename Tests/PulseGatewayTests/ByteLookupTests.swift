import OTLPProtobuf
import PulseJSON
import Testing

@testable import PulseGateway

/// The walk reads member names, attribute keys, URLs and decimal strings as the bytes the document
/// holds; each byte-wise reading gives what the `String` one it replaced gives.
@Suite struct ByteLookupTests {
    static func withBytes<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        Array(text.utf8).withUnsafeBufferPointer(body)
    }

    @Test func aKeyTableFindsEveryNameAndNothingElse() {
        let names = ["", "a", "ab", "service.name", "service.names", "url.full", "http.url", "0123456789abcdef"]
        let table = KeyTable(names)
        for (index, name) in names.enumerated() {
            #expect(Self.withBytes(name) { table.index($0) } == index, "\(name)")
        }
        for other in ["b", "ba", "service.nam", "Service.name", "url.ful", "0123456789abcdeF", "é"] {
            #expect(Self.withBytes(other) { table.index($0) } == nil, "\(other)")
        }
    }

    /// Every length from empty to 40 bytes (the words a key is read as change at 4, 8 and 16), and
    /// every one-byte change of each name, its prefixes and its extensions by a byte.
    @Test func aKeyTableComparesEveryByteAtEveryLength() {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789._".utf8)
        let names = (0...40).map { count in
            String(decoding: (0..<count).map { alphabet[($0 * 7 + count) % alphabet.count] }, as: UTF8.self)
        }
        let table = KeyTable(names)
        for (index, name) in names.enumerated() {
            let bytes = Array(name.utf8)
            #expect(bytes.withUnsafeBufferPointer { table.index($0) } == index, "\(name)")
            for position in bytes.indices {
                var changed = bytes
                changed[position] ^= 0x01
                #expect(changed.withUnsafeBufferPointer { table.index($0) } == nil, "\(name) at \(position)")
            }
            for other in [bytes + [UInt8(ascii: "!")], [UInt8(ascii: "!")] + bytes] {
                #expect(other.withUnsafeBufferPointer { table.index($0) } == nil, "\(name) extended")
            }
        }
    }

    @Test(arguments: MessageKind.allCases)
    func everySchemaFindsEachOfItsFieldsByName(_ kind: MessageKind) throws {
        let schema = OTLPValidator.schemas[kind.rawValue]
        let document = try JSONParser().parse(
            Array(("[" + schema.displays.map { "\"\($0)\"" }.joined(separator: ",") + ",\"unknown\"]").utf8))
        let nodes = Array(document.root.elements)
        for (index, node) in nodes.dropLast().enumerated() {
            #expect(schema.field(node) == index)
            #expect(schema.field(named: schema.displays[index]) == index)
        }
        #expect(schema.field(nodes.last!) == nil)
    }

    @Test func theByteScanForSensitiveKeysAgreesWithTheStringOne() {
        var keys = [
            "", "a", "service.name", "x-API_KEY", "Set-Cookie", "pass", "passwd", "ééapikey", "sesssession_key",
        ]
        for fragment in Redaction.sensitiveFragments {
            keys += [fragment, String(fragment.dropFirst()), String(fragment.dropLast()), "a." + fragment.uppercased()]
        }
        for key in keys {
            #expect(Self.withBytes(key) { Redaction.isSensitive(utf8: $0) } == Redaction.isSensitive(key), "\(key)")
        }
    }

    /// Digit runs of every length up to 25 (the scan reads eight at a time up to 19), each with
    /// every byte next to the digits' range at every position, against `UInt64(_:)`.
    @Test func decimalValuesAgreeWithUInt64AtEveryLengthAndPosition() {
        let neighbours: [UInt8] = [0x00, 0x2F, 0x3A, 0x3F, 0x40, 0x20, 0x2D, 0x2B, 0x70, 0xB0]
        for count in 0...25 {
            let digits = (0..<count).map { UInt8(ascii: "0") + UInt8(($0 * 7 + count) % 10) }
            var texts = [digits, [UInt8](repeating: UInt8(ascii: "9"), count: count)]
            for position in 0..<count {
                for byte in neighbours {
                    var text = digits
                    text[position] = byte
                    texts.append(text)
                }
            }
            for text in texts {
                let expected = UInt64(String(decoding: text, as: UTF8.self)).flatMap {
                    text.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ? $0 : nil
                }
                #expect(text.withUnsafeBufferPointer { OTLPValidator.decimalValue($0) } == expected, "\(text)")
            }
        }
    }

    @Test func asciiURLsLoseQueryAndFragmentAsTheStringFormDoes() {
        for url in ["https://h/p", "https://h/p?q=1#f", "https://h/p#f?q", "?", "#", "", "https://h/p?"] {
            let stripped = Self.withBytes(url) { bytes in
                Redaction.strippingQueryAndFragment(ascii: bytes).map { String(decoding: $0, as: UTF8.self) }
            }
            #expect(stripped == Redaction.strippingQueryAndFragment(url), "\(url)")
        }
        // Not ASCII: left to the String form, where a `?` with a combining mark is no separator.
        #expect(Self.withBytes("https://h/é?q") { Redaction.strippingQueryAndFragment(ascii: $0) } == nil)
        #expect(Redaction.strippingQueryAndFragment("https://h/p?\u{301}q#f") == "https://h/p?\u{301}q")
    }

    @Test func decimalStringsReadAsInt64AndUInt64ReadThem() throws {
        let texts = [
            "0", "-0", "007", "9", "-1", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
            "-9223372036854775809", "18446744073709551615", "18446744073709551616", "99999999999999999999",
            "0000000000000000000000001", "1764399990000000000", "+5", " 5", "5 ", "", "-", "1e3", "0x10",
        ]
        let document = try JSONParser().parse(
            Array(("[" + texts.map { "\"\($0)\"" }.joined(separator: ",") + "]").utf8))
        for (text, node) in zip(texts, document.root.elements) {
            let signed = OTLPValidator.isDecimalText(text, signed: true) ? Int64(text) : nil
            let unsigned = OTLPValidator.isDecimalText(text, signed: false) ? UInt64(text) : nil
            #expect(OTLPValidator.integer(node) == signed, "\(text)")
            #expect(OTLPValidator.unsignedInteger(node) == unsigned, "\(text)")
            #expect(AnyValue.int64(node) == Int64(text), "\(text)")
            let nanos = UInt64(text).flatMap { $0 > 0 ? Int64($0 / 1_000_000) : nil }
            #expect(AnyValue.nanosToMillis(node) == nanos, "\(text)")
        }
    }
}

extension OTLPValidator {
    /// ``isDecimal(_:signed:)`` of a `String`.
    static func isDecimalText(_ text: String, signed: Bool) -> Bool {
        ByteLookupTests.withBytes(text) { isDecimal($0, signed: signed) }
    }
}
