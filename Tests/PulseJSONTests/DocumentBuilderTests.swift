import PulseJSON
import Testing

/// `JSONDocumentBuilder` makes the document `JSONParser` makes of the same values.
@Suite struct DocumentBuilderTests {
    @Test(arguments: [
        #"{"a":[1,-2,18446744073709551615,1.5,-0.0,true,false,null,"x\u00e9\n",[],{}],"b":{"c":{"d":[[[]]]}},"":""}"#,
        #"[{"k":1,"k":2},[],"",0]"#, #""just a string""#, "7", "null",
    ])
    func aCopiedDocumentIsTheParsedOne(_ text: String) throws {
        let parsed = try JSONParser().parse(Array(text.utf8))
        var builder = JSONDocumentBuilder(nodes: 1, stringBytes: 1)
        builder.copy(parsed.root)
        let built = builder.finish()
        #expect(built.nodeCount == parsed.nodeCount)
        #expect(built.root.value.encoded() == parsed.root.value.encoded())
        #expect(built.root.value == parsed.root.value)
        // Lookups and iteration read the built tape like the parsed one.
        if parsed.root.kind == .object {
            for (key, value) in parsed.root.members {
                #expect(built.root[key]?.value == value.value)
            }
        }
        // The builder starts over after finish().
        builder.copy(parsed.root)
        #expect(builder.finish().root.value == parsed.root.value)
    }

    @Test func numbersTakeTheKindsTheParserGives() {
        var builder = JSONDocumentBuilder()
        builder.beginArray()
        builder.uint(5)
        builder.uint(UInt64(Int64.max) + 1)
        builder.double(1)
        builder.double(.nan)
        builder.double(-.infinity)
        builder.endArray()
        let root = builder.finish().root
        #expect(root.elements.map(\.kind) == [.int, .uint, .double, .null, .null])
        #expect(root.count == 5)
        #expect(String(decoding: root.value.encoded(), as: UTF8.self) == "[5,9223372036854775808,1.0,null,null]")
    }

    @Test func aFinishedDocumentKeepsItsValuesWhileTheBuilderGoesOn() {
        // finish() hands the builder's buffers to the document; the builder's next writes (and a
        // copy's) must land in buffers of their own.
        var builder = JSONDocumentBuilder(nodes: 1, stringBytes: 1)
        builder.beginObject()
        builder.key("first")
        builder.string("one")
        builder.endObject()
        let first = builder.finish()
        builder.beginArray()
        builder.string("second")
        builder.int(2)
        var copy = builder
        copy.string("copy only")
        copy.endArray()
        builder.endArray()
        let second = builder.finish()
        let copied = copy.finish()
        #expect(String(decoding: first.root.value.encoded(), as: UTF8.self) == #"{"first":"one"}"#)
        #expect(String(decoding: second.root.value.encoded(), as: UTF8.self) == #"["second",2]"#)
        #expect(String(decoding: copied.root.value.encoded(), as: UTF8.self) == #"["second",2,"copy only"]"#)
    }

    @Test func aCopyAndItsOriginalWriteStringsOfTheirOwn() {
        // The tape's uniqueness check covers the string arena: when either builder's tape is
        // copied (shared, or grown while shared), its arena must be copied too.
        var builder = JSONDocumentBuilder(nodes: 1, stringBytes: 1)
        builder.beginArray()
        builder.string("shared")
        var copy = builder
        for i in 0..<40 { builder.string("original \(i)") }
        for i in 0..<3 { copy.string("copy \(i)") }
        copy.string(byteCount: 3) { $0.initialize(repeating: UInt8(ascii: "z")) }
        builder.endArray()
        copy.endArray()
        let original = builder.finish()
        let copied = copy.finish()
        #expect(original.root.elements.map(\.string) == ["shared"] + (0..<40).map { "original \($0)" })
        #expect(copied.root.elements.map(\.string) == ["shared", "copy 0", "copy 1", "copy 2", "zzz"])
        // A copy taken of a builder that has just grown its arena, then written by the original.
        var grown = JSONDocumentBuilder(nodes: 4, stringBytes: 1)
        grown.beginObject()
        grown.key("k")
        var before = grown
        grown.string(String(repeating: "g", count: 100))
        before.string("b")
        grown.endObject()
        before.endObject()
        #expect(grown.finish().root["k"]?.string == String(repeating: "g", count: 100))
        #expect(before.finish().root["k"]?.string == "b")
    }

    @Test func decimalStringsAreTheIntegersText() {
        var builder = JSONDocumentBuilder()
        builder.beginArray()
        for value in [0, -1, Int64.min, Int64.max, 1_700_000_000_000_000_000] { builder.string(decimal: value) }
        builder.string(decimal: UInt64.max)
        builder.endArray()
        let strings = builder.finish().root.elements.map(\.string)
        #expect(
            strings == [
                "0", "-1", "-9223372036854775808", "9223372036854775807", "1700000000000000000",
                "18446744073709551615",
            ])
    }

    @Test func byteCountIsSixteenPerNodePlusStrings() {
        var builder = JSONDocumentBuilder()
        builder.beginObject()
        builder.key("name")
        builder.string("value")
        builder.endObject()
        #expect(builder.nodeCount == 3)
        #expect(builder.byteCount == 3 * 16 + 9)
        let document = builder.finish()
        #expect(document.byteCount == 3 * 16 + 9)
        #expect(document.root["name"]?.string == "value")
    }

    @Test func anExclusiveBuilderWritesTheBuildersDocumentWithEachKeyOnce() {
        // The same calls into both builders; the exclusive one keeps slot 0's and slot 1's key
        // bytes once, so the document is the same but its arena smaller.
        var shared = JSONDocumentBuilder(nodes: 1, stringBytes: 1)
        var exclusive = ExclusiveDocumentBuilder(nodes: 1, stringBytes: 1, keySlots: 2)
        shared.beginArray()
        exclusive.beginArray()
        for index in 0..<50 {
            shared.beginObject()
            exclusive.beginObject()
            shared.key("name")
            exclusive.key("name", slot: 0)
            shared.string("item \(index)")
            exclusive.string("item \(index)")
            shared.key("values")
            exclusive.key("values", slot: 1)
            shared.beginArray()
            exclusive.beginArray()
            shared.int(Int64(index))
            exclusive.int(Int64(index))
            shared.uint(UInt64.max)
            exclusive.uint(UInt64.max)
            shared.double(.infinity)
            exclusive.double(.infinity)
            shared.bool(index % 2 == 0)
            exclusive.bool(index % 2 == 0)
            shared.string(decimal: -Int64(index))
            exclusive.string(decimal: -Int64(index))
            shared.string(byteCount: 2) { $0.initialize(repeating: UInt8(ascii: "h")) }
            exclusive.string(byteCount: 2) { $0.initialize(repeating: UInt8(ascii: "h")) }
            shared.endArray()
            exclusive.endArray()
            shared.endObject()
            exclusive.endObject()
        }
        shared.endArray()
        exclusive.endArray()
        #expect(exclusive.byteCount == shared.byteCount - 49 * ("name".utf8.count + "values".utf8.count))
        let expected = shared.finish()
        let built = exclusive.finish()
        #expect(built.nodeCount == expected.nodeCount)
        #expect(built.root.value == expected.root.value)
        #expect(built.root.value.encoded() == expected.root.value.encoded())
        #expect(built.root.elements.map { $0["values"]?.count } == Array(repeating: 6, count: 50))
    }

    @Test func anExclusiveBuilderStartsOverWithoutItsKeys() {
        // reset() drops the arena, so the keys written before it are written again after it.
        var builder = ExclusiveDocumentBuilder(nodes: 1, stringBytes: 1, keySlots: 1)
        builder.beginObject()
        builder.key("dropped", slot: 0)
        builder.string("x")
        builder.reset()
        builder.beginObject()
        builder.key("kept", slot: 0)
        builder.string("value")
        builder.endObject()
        #expect(builder.byteCount == 3 * 16 + "keptvalue".utf8.count)
        #expect(String(decoding: builder.finish().root.value.encoded(), as: UTF8.self) == #"{"kept":"value"}"#)
    }
}
