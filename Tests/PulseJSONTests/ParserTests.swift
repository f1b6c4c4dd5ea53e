import PulseJSON
import PulseKit
import Testing

@Suite struct ParserTests {
    @Test func scalarsAtTopLevel() throws {
        #expect(try parse("null").root.isNull)
        #expect(try parse(" true ").root.bool == true)
        #expect(try parse("false").root.bool == false)
        #expect(try parse("\"hi\"").root.string == "hi")
        #expect(try parse("42").root.value == .int(42))
        #expect(try parse("[]").root.kind == .array)
        #expect(try parse("{}").root.kind == .object)
    }

    @Test func integerKindsAndLimits() throws {
        #expect(try parse("9223372036854775807").root.value == .int(.max))
        #expect(try parse("-9223372036854775808").root.value == .int(.min))
        #expect(try parse("9223372036854775808").root.value == .uint(UInt64(Int64.max) + 1))
        #expect(try parse("18446744073709551615").root.value == .uint(.max))
        // Beyond 64 bits: rejected, never rounded to a double.
        #expect(failure("18446744073709551616") == .invalidNumber)
        #expect(failure("-9223372036854775809") == .invalidNumber)
        #expect(failure("123456789012345678901234567890") == .invalidNumber)
        #expect(failure("[1,99999999999999999999]") == .invalidNumber)
    }

    @Test func bigIntegersAsDoublesWhenAsked() throws {
        let parser = JSONParser(bigIntegersAsDoubles: true)
        #expect(try parser.parse(Array("18446744073709551616".utf8)).root.value == .double(18_446_744_073_709_551_616))
        // Just below Int64.min: not rounded onto it (an integer field must still refuse it).
        let belowMinimum = try #require(try parser.parse(Array("-9223372036854775809".utf8)).root.double)
        #expect(belowMinimum == (-0x1p63).nextDown)
        #expect(try parser.parse(Array("-9223372036854775809".utf8)).root.int64 == nil)
        #expect(try parser.parse(Array("-92233720368547758090".utf8)).root.double == -9.223372036854775809e19)
        let text =
            #"{"a":[1,123456789012345678901234567890,-0.5e3],"s":"99999999999999999999\"1","#
            + #""u":18446744073709551615}"#
        let mixed = try parser.parse(Array(text.utf8))
        #expect(mixed.root["a"]?.elements.map(\.value) == [.int(1), .double(1.2345678901234568e29), .double(-500)])
        // Strings (escaped quotes included) and in-range integers are untouched.
        #expect(mixed.root["s"]?.string == #"99999999999999999999"1"#)
        #expect(mixed.root["u"]?.value == .uint(.max))
        // Still rejected: doubles overflowing, malformed numbers; and by default, big integers.
        #expect(throws: PulseJSONError.self) { try parser.parse(Array("[1e400,99999999999999999999]".utf8)) }
        #expect(throws: PulseJSONError.self) { try parser.parse(Array("[01234567890123456789012]".utf8)) }
        #expect(failure("99999999999999999999") == .invalidNumber)
    }

    @Test func negativeZeroAndExponents() throws {
        // "-0" is an integer (sign lost), "-0.0" a double that keeps its sign.
        #expect(try parse("-0").root.value == .int(0))
        let negativeZero = try #require(try parse("-0.0").root.double)
        #expect(negativeZero == 0 && negativeZero.sign == .minus)
        #expect(try parse("1e2").root.value == .double(100))
        #expect(try parse("1E+2").root.value == .double(100))
        #expect(try parse("-1.25e-2").root.value == .double(-0.0125))
        #expect(try parse("1.0").root.kind == .double)
        #expect(try parse("1e-400").root.value == .double(0))  // underflow rounds to zero
        #expect(try parse("2.2250738585072014e-308").root.double == 2.2250738585072014e-308)
        #expect(try parse("4.9406564584124654e-324").root.double == Double.leastNonzeroMagnitude)
        #expect(failure("1e400") == .invalidNumber)
        #expect(failure("-1e309") == .invalidNumber)
    }

    @Test(arguments: ["01", "1.", ".5", "+1", "-", "1e", "1e+", "0x10", "NaN", "Infinity", "-Infinity", "--1"])
    func malformedNumbers(_ text: String) {
        let code = failure(text)
        #expect(code == .invalidNumber || code == .invalidJSON)
    }

    @Test func allEscapes() throws {
        let text = #""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\ud83d\ude00\u0000""#
        #expect(try parse(text).root.string == "\"\\/\u{8}\u{C}\n\r\tA\u{E9}\u{20AC}\u{1F600}\u{0}")
        // Escapes in keys are unescaped too.
        let document = try parse(#"{"a\nb":1,"\u00e9":2}"#)
        #expect(document.root["a\nb"]?.int64 == 1)
        #expect(document.root["é"]?.int64 == 2)
    }

    @Test(arguments: [
        #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud800x""#, #""\udfff\ud800""#, #""\ud83d\ud83d""#,
        #""\u12""#, #""\uZZZZ""#, #""\x""#, #""\'""#,
    ])
    func badEscapesAndLoneSurrogates(_ text: String) {
        #expect(failure(text) == .invalidJSON)
    }

    @Test func rawUTF8PassesThrough() throws {
        #expect(try parse("\"é€😀\"").root.string == "é€😀")
    }

    @Test(
        arguments: [
            [0x22, 0xFF, 0x22],  // invalid byte
            [0x22, 0xC0, 0xAF, 0x22],  // overlong "/"
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // UTF-16 surrogate encoded in UTF-8
            [0x22, 0xE2, 0x82, 0x22],  // truncated sequence
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x5B, 0x31, 0x5D, 0x20, 0x80],  // stray continuation byte after the value
        ] as [[UInt8]])
    func invalidUTF8(_ bytes: [UInt8]) {
        #expect(failure(bytes) == .invalidUTF8)
    }

    @Test func depthLimit() {
        func nestedArrays(_ depth: Int) -> String {
            String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        }
        func nestedObjects(_ depth: Int) -> String {
            String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
        }
        #expect(failure(nestedArrays(64)) == nil)
        #expect(failure(nestedArrays(65)) == .depthExceeded)
        #expect(failure(nestedObjects(64)) == nil)
        #expect(failure(nestedObjects(65)) == .depthExceeded)
        #expect(failure("[1]", maxDepth: 1) == nil)
        #expect(failure("[[1]]", maxDepth: 1) == .depthExceeded)
        #expect(failure("1", maxDepth: 1) == nil)
        #expect(failure(nestedArrays(1024), maxDepth: 5000) == nil)
        #expect(failure(nestedArrays(1025), maxDepth: 5000) == .depthExceeded)
        #expect(JSONParser(maxDepth: 5000).maxDepth == JSONParser.depthLimit)
        #expect(JSONParser(maxDepth: 0).maxDepth == 1)
    }

    @Test func sizeLimit() {
        #expect(failure("[1,2,3,40]", maxBytes: 10) == nil)
        #expect(failure("[1,2,3,400]", maxBytes: 10) == .tooLarge)
        #expect(failure(" ", maxBytes: 0) == .tooLarge)
        let big = "[" + Array(repeating: "12345678", count: 100_000).joined(separator: ",") + "]"
        #expect(failure(big, maxBytes: 900_000) == .tooLarge)
        #expect(failure(big, maxBytes: 1 << 20) == nil)
    }

    @Test func emptyInput() {
        #expect(failure([UInt8]()) == .invalidJSON)
        #expect(failure(" \n\t\r ") == .invalidJSON)
        let parser = JSONParser()
        #expect(throws: PulseJSONError.self) { try parser.parse(UnsafeRawBufferPointer(start: nil, count: 0)) }
    }

    @Test func everyTruncationFails() {
        let text = #"{"a":[1,2.5,{"b":"c\u00e9"}],"d":true,"e":null,"f":"x"}"#
        let bytes = Array(text.utf8)
        #expect(failure(bytes) == nil)
        for length in 0..<bytes.count {
            let code = failure(Array(bytes[0..<length]))
            #expect(code == .invalidJSON || code == .invalidNumber, "prefix of \(length) bytes")
        }
    }

    @Test(arguments: ["[1] x", "{} {}", "1 2", "[1]]", "{}}", "\"a\" \"b\"", "null,", "[1] // c"])
    func trailingContent(_ text: String) {
        #expect(failure(text) == .invalidJSON)
    }

    @Test(arguments: [
        "[1,]", "{\"a\":1,}", "{'a':1}", "{a:1}", "[1 2]", "{\"a\" 1}", "{\"a\":}", "/* c */ 1", "tru", "nul",
        "falsey", "\"unterminated", "\"tab\tinside\"", "\"nl\ninside\"", "{\"a\":1", "[", "]", ":", ",",
    ])
    func notJSON(_ text: String) {
        #expect(failure(text) == .invalidJSON)
    }

    @Test func duplicateKeysFirstWinsOnLookup() throws {
        let root = try parse(#"{"a":1,"b":2,"a":3}"#).root
        #expect(root["a"]?.int64 == 1)
        #expect(root.count == 3)
        #expect(root.members.map(\.key) == ["a", "b", "a"])
        #expect(
            root.value
                == .object([
                    JSONMember(key: "a", value: .int(1)), JSONMember(key: "b", value: .int(2)),
                    JSONMember(key: "a", value: .int(3)),
                ]))
    }

    @Test func documentsOutliveReuseAndTheParser() throws {
        var parser: JSONParser? = JSONParser()
        let big = try #require(parser).parse(Array(#"{"k":["a long string value that is not inline",1,2,3]}"#.utf8))
        let small = try #require(parser).parse(Array(#"["x"]"#.utf8))
        parser = nil
        #expect(big.root["k"]?[0]?.string == "a long string value that is not inline")
        #expect(big.root["k"]?[3]?.int64 == 3)
        #expect(small.root[0]?.string == "x")
    }

    @Test func reusedParserRecoversAfterErrors() throws {
        let parser = JSONParser(maxDepth: 4, maxBytes: 64)
        #expect(throws: PulseJSONError.self) { try parser.parse(Array("[[[[[1]]]]]".utf8)) }
        #expect(throws: PulseJSONError.self) { try parser.parse(Array(repeating: 0x20, count: 65)) }
        #expect(try parser.parse(Array("[[[[1]]]]".utf8)).root[0]?[0]?[0]?[0]?.int64 == 1)
    }

    @Test func parserKeepsWorkingAfterReleasingLargeBuffers() throws {
        let parser = JSONParser()
        let element = #"{"k":"a string value","n":12345}"#
        let count = JSONParser.retainedBytesLimit / element.utf8.count + 1
        let large = Array(("[" + Array(repeating: element, count: count).joined(separator: ",") + "]").utf8)
        #expect(large.count > JSONParser.retainedBytesLimit)
        let big = try parser.parse(large)
        let small = try parser.parse(Array(#"{"ok":true}"#.utf8))
        #expect(throws: PulseJSONError.self) { try parser.parse(Array(large.dropLast())) }
        let again = try parser.parse(Array(#"[1,2,3]"#.utf8))
        #expect(big.root.count == count)
        #expect(big.root[count - 1]?["k"]?.string == "a string value")
        #expect(small.root["ok"]?.bool == true)
        #expect(again.root[2]?.int64 == 3)
    }

    @Test func parsesFromUnsafeBuffer() throws {
        let bytes = Array(#"{"a":"b"}"#.utf8)
        let parser = JSONParser()
        let document = try bytes.withUnsafeBytes { (raw) throws(PulseJSONError) in try parser.parse(raw) }
        #expect(document.root["a"]?.string == "b")
        #expect(document.nodeCount == 3)
    }

    @Test func errorDescriptionHasNoPayload() {
        do {
            _ = try parse(#"{"password":"hunter2"#)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidJSON)
            #expect(!error.description.contains("hunter2"))
            #expect(error.description.contains("invalidJSON"))
            #expect(!error.message.isEmpty)
        }
    }
}
