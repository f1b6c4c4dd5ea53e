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
}
