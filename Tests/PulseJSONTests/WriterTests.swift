import PulseJSON
import Testing

@Suite struct WriterTests {
    @Test func structureAndCommas() {
        let text = written { w in
            w.beginObject()
            w.field("a", "x")
            w.key("b")
            w.beginArray()
            w.int(1)
            w.beginObject()
            w.endObject()
            w.beginArray()
            w.endArray()
            w.null()
            w.endArray()
            w.field("c", true)
            w.key("d")
            w.beginObject()
            w.field("e", Int64?.none)
            w.endObject()
            w.endObject()
        }
        #expect(text == #"{"a":"x","b":[1,{},[],null],"c":true,"d":{"e":null}}"#)
    }

    @Test func topLevelSequenceOfScalars() {
        #expect(written { $0.string("a") } == #""a""#)
        #expect(written { $0.bool(false) } == "false")
        #expect(
            written {
                $0.beginArray()
                $0.bool(true)
                $0.bool(false)
                $0.null()
                $0.endArray()
            } == "[true,false,null]")
    }

    @Test func fieldsWriteNullForNil() {
        let text = written { w in
            w.beginObject()
            w.field("s", String?.none)
            w.field("i", Int64?.none)
            w.field("n", Int?.none)
            w.field("u", UInt64?.none)
            w.field("d", Double?.none)
            w.field("b", Bool?.none)
            w.field("v", JSONValue?.none)
            w.field("s2", "x")
            w.field("i2", Int64(-5))
            w.field("n2", 7)
            w.field("u2", UInt64.max)
            w.field("d2", 0.5)
            w.field("b2", false)
            w.field("v2", JSONValue.array([.int(1)]))
            w.endObject()
        }
        #expect(
            text == #"{"s":null,"i":null,"n":null,"u":null,"d":null,"b":null,"v":null,"#
                + #""s2":"x","i2":-5,"n2":7,"u2":18446744073709551615,"d2":0.5,"b2":false,"v2":[1]}"#)
    }

    @Test func escapesEveryControlCharacter() {
        let short: [UInt8: String] = [0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"]
        let hex = Array("0123456789abcdef")
        for byte in UInt8(0)..<0x20 {
            let scalar = String(Character(Unicode.Scalar(byte)))
            let expected = short[byte] ?? "\\u00\(hex[Int(byte >> 4)])\(hex[Int(byte & 0xF)])"
            #expect(written { $0.string(scalar) } == "\"\(expected)\"")
        }
        #expect(written { $0.string("\u{1F}") } == #""\u001f""#)
        #expect(written { $0.string("\u{0}") } == #""\u0000""#)
    }

    @Test func escapesExactBytes() {
        #expect(written { $0.string(#"a"b\c/d"#) } == #""a\"b\\c/d""#)
        #expect(written { $0.string("\u{7F}") } == "\"\u{7F}\"")  // DEL is not a control char for JSON
        #expect(written { $0.string("") } == #""""#)
        #expect(written { $0.string("\"\"") } == #""\"\"""#)
        #expect(written { $0.string("\\") } == #""\\""#)
        let mixed = "x\n\u{1}é😀\r"
        #expect(written { $0.string(mixed) } == "\"x\\n\\u0001é😀\\r\"")
        #expect(
            written {
                $0.beginObject()
                $0.key("k\"\n")
                $0.int(1)
                $0.endObject()
            } == #"{"k\"\n":1}"#)
    }

    @Test func nonASCIIPassesThroughAsUTF8() {
        let writer = { (text: String) -> [UInt8] in
            var w = JSONWriter()
            w.string(text)
            return w.bytes
        }
        #expect(writer("é€😀") == [0x22] + Array("é€😀".utf8) + [0x22])
        #expect(writer("\u{2028}\u{2029}") == [0x22, 0xE2, 0x80, 0xA8, 0xE2, 0x80, 0xA9, 0x22])
    }

    @Test func lineSeparatorsOptionallyEscaped() {
        #expect(
            written(escapesLineSeparators: true) { $0.string("a\u{2028}b\u{2029}c\u{2027}") }
                == "\"a\\u2028b\\u2029c\u{2027}\"")
        #expect(written(escapesLineSeparators: true) { $0.string("\u{2028}") } == #""\u2028""#)
        #expect(written(escapesLineSeparators: false) { $0.string("\u{2028}") } == "\"\u{2028}\"")
    }

    @Test func integers() {
        #expect(written { $0.int(Int64(0)) } == "0")
        #expect(written { $0.int(Int64(9)) } == "9")
        #expect(written { $0.int(Int64(10)) } == "10")
        #expect(written { $0.int(Int64(-1)) } == "-1")
        #expect(written { $0.int(Int64.max) } == "9223372036854775807")
        #expect(written { $0.int(Int64.min) } == "-9223372036854775808")
        #expect(written { $0.int(-42) } == "-42")
        #expect(written { $0.uint(UInt64.max) } == "18446744073709551615")
        #expect(written { $0.uint(0) } == "0")
    }

    /// The two-digits-at-a-time rendering against `String(_:)`: every value below 10,000, each
    /// power of ten and its neighbours, and a spread of large values, with and without a comma.
    @Test func integersMatchTheirDescription() {
        var values: [Int64] = Array(-10_000...10_000) + [Int64.min, Int64.min + 1, Int64.max]
        var power: Int64 = 1
        for _ in 0..<19 {
            values += [power - 1, power, power + 1, -power, -(power - 1)]
            power = power &* 10
        }
        var seed: UInt64 = 7
        for _ in 0..<2_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            values.append(Int64(bitPattern: seed) >> (seed % 64))
        }
        var writer = JSONWriter()
        writer.beginArray()
        for value in values { writer.int(value) }
        writer.uint(UInt64.max)
        writer.uint(UInt64(Int64.max) + 1)
        writer.endArray()
        let expected =
            "["
            + (values.map { String($0) } + [String(UInt64.max), String(UInt64(Int64.max) + 1)])
            .joined(separator: ",") + "]"
        #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
    }

    @Test(arguments: [
        (0.0, "0.0"), (-0.0, "-0.0"), (1.0, "1.0"), (-1.0, "-1.0"), (1.5, "1.5"), (0.1, "0.1"),
        (100.0, "100.0"), (1e-5, "1e-05"), (1e16, "1e+16"), (1e15, "1000000000000000.0"),
        (999_999_999_999_999.0, "999999999999999.0"), (0.30000000000000004, "0.30000000000000004"),
        (.leastNonzeroMagnitude, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"), (-2.5e-7, "-2.5e-07"),
        (123456789.125, "123456789.125"), (9_007_199_254_740_992.0, "9007199254740992.0"),
        (9_007_199_254_740_994.0, "9.007199254740994e+15"),
    ])
    func doubles(_ value: Double, _ expected: String) {
        #expect(written { $0.double(value) } == expected)
    }

    @Test func nonFiniteDoublesAreNull() {
        #expect(written { $0.double(.nan) } == "null")
        #expect(written { $0.double(.infinity) } == "null")
        #expect(written { $0.double(-.infinity) } == "null")
        #expect(
            written {
                $0.beginArray()
                $0.double(.nan)
                $0.double(1)
                $0.endArray()
            } == "[null,1.0]")
    }

    @Test func integralFastPathMatchesDescription() {
        // The writer formats integral doubles below 1e15 itself; it must print what Swift would.
        var value = 1.0
        while value < 1e15 {
            for candidate in [value, -value, value + 1, value - 1, value * 3] {
                #expect(written { $0.double(candidate) } == candidate.description)
            }
            value *= 7
        }
    }

    @Test func writesValueTrees() {
        let value: JSONValue = .object([
            JSONMember(key: "a", value: .array([.int(1), .uint(2), .double(2.5), .string("s"), .bool(true), .null])),
            JSONMember(key: "b", value: .object([])),
        ])
        #expect(String(decoding: value.encoded(), as: UTF8.self) == #"{"a":[1,2,2.5,"s",true,null],"b":{}}"#)
        #expect(String(decoding: JSONValue.array([]).encoded(), as: UTF8.self) == "[]")
    }

    @Test func copiesAreIndependent() {
        var first = JSONWriter()
        first.beginArray()
        first.int(1)
        var second = first
        second.int(2)
        second.endArray()
        first.endArray()
        #expect(String(decoding: first.bytes, as: UTF8.self) == "[1]")
        #expect(String(decoding: second.bytes, as: UTF8.self) == "[1,2]")
        #expect(first.count == 3 && second.count == 5)
    }

    @Test func settingBytesStartsAFreshValue() {
        var writer = JSONWriter()
        writer.string("a")
        writer.bytes = Array("[".utf8)
        writer.int(1)
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[1]")
    }

    @Test func growsPastInitialCapacity() throws {
        var writer = JSONWriter(capacity: 1)
        writer.beginArray()
        for i in 0..<5_000 { writer.string("element \(i) \u{1}") }
        writer.endArray()
        let root = try JSONParser().parse(writer.bytes).root
        #expect(root.count == 5_000)
        #expect(root[4_999]?.string == "element 4999 \u{1}")
    }

    @Test func resetKeepsNothingButCapacity() {
        var writer = JSONWriter(capacity: 16)
        writer.beginArray()
        writer.int(1)
        writer.reset()
        writer.int(2)
        #expect(writer.bytes == Array("2".utf8))
    }

    /// A copy keeps its bytes when the original is reset and written again into the buffer they
    /// shared, and when either grows past the shared capacity.
    @Test func copiesSurviveResetAndGrowth() {
        var writer = JSONWriter(capacity: 16)
        writer.beginArray()
        writer.string("kept")
        let snapshot = writer
        writer.reset()
        writer.string("other")
        #expect(String(decoding: snapshot.bytes, as: UTF8.self) == #"["kept""#)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #""other""#)
        var grown = snapshot
        for _ in 0..<20 { grown.string("0123456789") }
        grown.endArray()
        #expect(String(decoding: snapshot.bytes, as: UTF8.self) == #"["kept""#)
        #expect(grown.count == 7 + 20 * 13 + 1)
    }

    @Test func splicesAnotherWritersOutput() {
        var attributes = JSONWriter()
        attributes.beginObject()
        attributes.field("a", 1 as Int64?)
        attributes.endObject()
        var writer = JSONWriter()
        writer.beginArray()
        writer.raw(attributes)
        writer.raw(attributes.bytes)
        Array("null".utf8).withUnsafeBufferPointer { writer.raw(utf8: $0) }
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"[{"a":1},{"a":1},null]"#)
        #expect(writer.withBytes { Array($0) } == writer.bytes)
    }
}

/// A straightforward per-byte escaper to check the writer's word-at-a-time one against.
private func referenceQuoted(_ text: String, escapesLineSeparators: Bool) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\u{8}": out += "\\b"
        case "\u{C}": out += "\\f"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case "\u{2028}" where escapesLineSeparators: out += "\\u2028"
        case "\u{2029}" where escapesLineSeparators: out += "\\u2029"
        default:
            if scalar.value < 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

@Suite struct WriterEscapingSweepTests {
    /// Strings of many lengths with special characters at varying positions, so the eight-byte
    /// scanning and its padded tail, the one-piece path (up to 512 bytes) and the chunked
    /// long-string path (with multi-byte characters straddling chunk boundaries) meet every case.
    @Test(arguments: [false, true])
    func matchesReferenceEscaping(escapesLineSeparators: Bool) {
        let specials = ["\"", "\\", "\n", "\u{1}", "\u{1F}", "\u{2028}", "\u{2029}", "\u{2027}", "é", "😀", "\u{7F}"]
        var seed: UInt64 = 42
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        for length in Array(0...300) + Array(490...530) + Array(stride(from: 1_000, through: 1_600, by: 37)) {
            var text = String(repeating: "a", count: length)
            for _ in 0..<(length % 4 + length / 200) {
                let special = specials[next(specials.count)]
                let offset = next(text.count + 1)
                text.insert(contentsOf: special, at: text.index(text.startIndex, offsetBy: offset))
            }
            var writer = JSONWriter(escapesLineSeparators: escapesLineSeparators)
            writer.beginArray()
            writer.string(text)
            writer.key(text)  // keys share the path (not valid JSON inside an array, fine for bytes)
            writer.endArray()
            let expected = referenceQuoted(text, escapesLineSeparators: escapesLineSeparators)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == "[" + expected + "," + expected + ":]")
        }
    }

    /// Every length up to 24 (the one- and two-word checks, the padded short-string word), with
    /// each special character at each position, as a value and as a key, against the reference.
    @Test(arguments: [false, true])
    func shortStringsWithASpecialAtEveryPosition(escapesLineSeparators: Bool) {
        let specials = ["\"", "\\", "\n", "\u{0}", "\u{1F}", " ", "\u{7F}", "\u{2028}", "\u{2027}", "é"]
        for length in 0...24 {
            for special in specials {
                for position in 0...length {
                    var text = String(repeating: "a", count: length)
                    text.insert(contentsOf: special, at: text.index(text.startIndex, offsetBy: position))
                    var writer = JSONWriter(escapesLineSeparators: escapesLineSeparators)
                    writer.beginArray()
                    writer.string(text)
                    writer.key(text)
                    writer.endArray()
                    let expected = referenceQuoted(text, escapesLineSeparators: escapesLineSeparators)
                    #expect(String(decoding: writer.bytes, as: UTF8.self) == "[" + expected + "," + expected + ":]")
                }
            }
        }
    }

    @Test func longStringOfSeparatorsAtEveryAlignment() throws {
        for prefix in 0..<8 {
            let text = String(repeating: "x", count: prefix) + String(repeating: "\u{2028}", count: 400)
            var writer = JSONWriter(escapesLineSeparators: true)
            writer.string(text)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == referenceQuoted(text, escapesLineSeparators: true))
            #expect(try JSONValue.parse(writer.bytes) == .string(text))
        }
    }
}
