import PulseJSON
import Testing

/// `JSONDocumentBuilder` makes the document `JSONParser` makes of the same values.
@Suite struct DocumentBuilderTests {
    /// Feeds `node` to `builder` value by value, as a decoder of another format does.
    private func rebuild(_ node: JSONNode, into builder: inout JSONDocumentBuilder) {
        switch node.kind {
        case .null: builder.null()
        case .bool: builder.bool(node.bool!)
        case .int: builder.int(node.int64!)
        case .uint: builder.uint(node.uint64!)
        case .double: builder.double(node.double!)
        case .string: _ = node.withUTF8 { builder.string(utf8: $0) }
        case .array:
            builder.beginArray()
            for element in node.elements { rebuild(element, into: &builder) }
            builder.endArray()
        case .object:
            builder.beginObject()
            for (key, value) in node.memberNodes {
                _ = key.withUTF8 { builder.key(utf8: $0) }
                rebuild(value, into: &builder)
            }
            builder.endObject()
        }
    }

    @Test(arguments: [
        #"{"a":[1,-2,18446744073709551615,1.5,-0.0,true,false,null,"x\u00e9\n",[],{}],"b":{"c":{"d":[[[]]]}},"":""}"#,
        #"[{"k":1,"k":2},[],"",0]"#, #""just a string""#, "7", "null",
    ])
    func aRebuiltDocumentIsTheParsedOne(_ text: String) throws {
        let parsed = try JSONParser().parse(Array(text.utf8))
        var builder = JSONDocumentBuilder(nodes: 1, stringBytes: 1)
        rebuild(parsed.root, into: &builder)
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
        rebuild(parsed.root, into: &builder)
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
