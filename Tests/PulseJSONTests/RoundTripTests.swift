import PulseJSON
import Testing

@Suite struct RoundTripTests {
    @Test func writerToParserPreservesEveryKind() throws {
        let bytes = everyKindValue.encoded()
        let reparsed = try JSONValue.parse(bytes)
        #expect(reparsed == everyKindValue)
        #expect(identical(reparsed, everyKindValue))
        #expect(reparsed.encoded() == bytes)
    }

    @Test func parserToWriterIsStable() throws {
        let text = #"""
            { "a" : [ 1 , -0 , -0.0 , 1E2 , 0.5e-3 , "\u00e9\ud83d\ude00\/" ] ,
              "b" : { "c" : null , "d" : [ ] , "e" : { } } , "f" : 18446744073709551615 }
            """#
        let first = try JSONValue.parse(Array(text.utf8))
        let encoded = first.encoded()
        #expect(
            String(decoding: encoded, as: UTF8.self)
                == #"{"a":[1,0,-0.0,100.0,0.0005,"é😀/"],"b":{"c":null,"d":[],"e":{}},"f":18446744073709551615}"#)
        let second = try JSONValue.parse(encoded)
        #expect(identical(first, second))
    }

    @Test func doublesRoundTripBitExactly() throws {
        var values: [Double] = [
            0, -0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
            .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0.1, 0.2, 0.1 + 0.2, 1.0 / 3.0,
            2.0 / 3.0, 123_456.789e-300, Double(9_007_199_254_740_993 as UInt64), 1e22, 1e23, 4.35, 2.5e-7,
        ]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let candidate = Double(bitPattern: seed)
            if candidate.isFinite { values.append(candidate) }
        }
        let parser = JSONParser()
        for value in values {
            var writer = JSONWriter()
            writer.double(value)
            let node = try parser.parse(writer.bytes).root
            #expect(node.kind == .double)
            #expect(node.double?.bitPattern == value.bitPattern, "\(value)")
        }
    }

    @Test func integersRoundTrip() throws {
        let values: [JSONValue] = [
            .int(0), .int(1), .int(-1), .int(.max), .int(.min), .int(1_000_000_007), .uint(UInt64(Int64.max) + 1),
            .uint(.max),
        ]
        let parsed = try JSONValue.parse(JSONValue.array(values).encoded())
        #expect(parsed == .array(values))
    }

    @Test func stringsWithEveryScalarClassRoundTrip() throws {
        var scalars = (0..<0x80).compactMap(Unicode.Scalar.init).map(String.init)
        scalars += ["\u{80}", "\u{7FF}", "\u{800}", "\u{FFFF}", "\u{10000}", "\u{10FFFF}", "\u{2028}", "\u{FEFF}"]
        let text = scalars.joined()
        for escapesLineSeparators in [false, true] {
            var writer = JSONWriter(escapesLineSeparators: escapesLineSeparators)
            writer.beginObject()
            writer.field(text, text)
            writer.endObject()
            let root = try JSONParser().parse(writer.bytes).root
            #expect(root[text]?.string == text)
            #expect(Array(root.members).first?.key == text)
        }
    }

    @Test func deepNestingRoundTrip() throws {
        var value = JSONValue.int(7)
        for depth in 0..<63 {
            value = depth.isMultiple(of: 2) ? .array([value]) : .object([JSONMember(key: "k", value: value)])
        }
        let reparsed = try JSONValue.parse(value.encoded())
        #expect(reparsed == value)
        #expect(throws: PulseJSONError.self) {
            try JSONValue.parse(JSONValue.array([value, .array([value])]).encoded())
        }
    }
}
