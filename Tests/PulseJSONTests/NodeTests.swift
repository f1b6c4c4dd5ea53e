import PulseJSON
import Testing

@Suite struct NodeTests {
    let document: JSONDocument

    init() throws {
        document = try parse(
            #"""
            {"name":"checkout","count":3,"ratio":0.25,"ok":true,"none":null,
             "list":[[],{},[[]],1,"two",{"x":[3]}],
             "big":18446744073709551615,"neg":-7,"whole":2.0,"huge":1e300,"é":"accent"}
            """#)
    }

    @Test func kindsAndCounts() throws {
        let root = document.root
        #expect(root.kind == .object)
        #expect(root.count == 11)
        #expect(root["name"]?.kind == .string)
        #expect(root["count"]?.kind == .int)
        #expect(root["ratio"]?.kind == .double)
        #expect(root["ok"]?.kind == .bool)
        #expect(root["none"]?.kind == .null)
        #expect(root["none"]?.isNull == true)
        #expect(root["list"]?.kind == .array)
        #expect(root["list"]?.count == 6)
        #expect(root["big"]?.kind == .uint)
        #expect(root["name"]?.count == 0)
        // 1 root + 11 keys + 11 values + 10 nodes nested in "list"
        #expect(document.nodeCount == 33)
    }

    @Test func lookupMisses() {
        let root = document.root
        #expect(root["missing"] == nil)
        #expect(root["nam"] == nil)
        #expect(root["names"] == nil)
        #expect(root["name"]?["x"] == nil)  // not an object
        #expect(root[0] == nil)  // not an array
        #expect(root["list"]?[-1] == nil)
        #expect(root["list"]?[6] == nil)
        #expect(root["é"]?.string == "accent")
    }

    @Test func indexSkipsSubtrees() throws {
        let list = try #require(document.root["list"])
        #expect(list[0]?.count == 0)
        #expect(list[1]?.kind == .object)
        #expect(list[2]?[0]?.kind == .array)
        #expect(list[3]?.int64 == 1)
        #expect(list[4]?.string == "two")
        #expect(list[5]?["x"]?[0]?.int64 == 3)
        #expect(list.elements.map(\.kind) == [.array, .object, .array, .int, .string, .object])
        #expect(Array(list.elements).count == list.count)
        #expect(list.elements.underestimatedCount == 6)
    }

    @Test func membersInOrder() throws {
        let root = document.root
        #expect(
            root.members.map(\.key) == [
                "name", "count", "ratio", "ok", "none", "list", "big", "neg", "whole", "huge", "é",
            ])
        let pairs = root.memberNodes.map { ($0.key.string ?? "?", $0.value.kind) }
        #expect(pairs.first?.0 == "name" && pairs.first?.1 == .string)
        #expect(pairs.last?.0 == "é" && pairs.last?.1 == .string)
        #expect(root["list"]?.members.map(\.key) == [])
        #expect(root["name"]?.elements.map(\.kind) == [])
        #expect(root.elements.map(\.kind) == [])
    }

    @Test func numericConversions() throws {
        let root = document.root
        #expect(root["count"]?.int64 == 3)
        #expect(root["count"]?.uint64 == 3)
        #expect(root["count"]?.double == 3)
        #expect(root["neg"]?.int64 == -7)
        #expect(root["neg"]?.uint64 == nil)
        #expect(root["big"]?.int64 == nil)
        #expect(root["big"]?.uint64 == .max)
        #expect(root["big"]?.double == 18_446_744_073_709_551_616.0)
        #expect(root["whole"]?.int64 == 2)  // integral double
        #expect(root["whole"]?.uint64 == 2)
        #expect(root["ratio"]?.int64 == nil)  // fractional: never truncated
        #expect(root["ratio"]?.double == 0.25)
        #expect(root["huge"]?.int64 == nil)  // out of range
        #expect(root["huge"]?.uint64 == nil)
        #expect(root["name"]?.int64 == nil)
        #expect(root["name"]?.double == nil)
        #expect(root["ok"]?.bool == true)
        #expect(root["count"]?.bool == nil)
        #expect(root["count"]?.string == nil)
        #expect(root["count"]?.isNull == false)
    }

    @Test func integralDoubleEdges() throws {
        let root = try parse("[9.223372036854775807e18,-9.223372036854775808e18,1.8446744073709552e19,-1.0,-0.0]").root
        #expect(root[0]?.int64 == nil)  // rounds to 2^63, out of range
        #expect(root[0]?.uint64 == 9_223_372_036_854_775_808)
        #expect(root[1]?.int64 == .min)
        #expect(root[2]?.uint64 == nil)  // 2^64
        #expect(root[3]?.int64 == -1)
        #expect(root[3]?.uint64 == nil)
        #expect(root[4]?.int64 == 0)
    }

    @Test func stringMatchingWithoutAllocation() throws {
        let name = try #require(document.root["name"])
        #expect(name.stringEquals("checkout"))
        #expect(name.stringEquals(String("checkout")))
        #expect(!name.stringEquals("checkou"))
        #expect(!name.stringEquals("checkout!"))
        #expect(!name.stringEquals(""))
        let staticName: StaticString = "checkout"
        #expect(name.stringEquals(staticName))
        #expect(document.root["é"]?.stringEquals("accent") == true)
        #expect(document.root["count"]?.stringEquals("3") == false)
        let keys = document.root.memberNodes.filter { $0.key.stringEquals("ok") }
        #expect(keys.count == 1 && keys.first?.value.bool == true)
        let empty = try parse(#"[""]"#).root[0]
        #expect(empty?.stringEquals("") == true)
        #expect(empty?.string == "")
    }

    @Test func withUTF8ReadsBytesInPlace() throws {
        let bytes = document.root["é"]?.withUTF8 { Array($0) }
        #expect(bytes == Array("accent".utf8))
        #expect(document.root["count"]?.withUTF8 { $0.count } == .some(nil))
    }

    @Test func materializesValues() throws {
        let value = try parse(#"{"a":[1,-2,3.5,"s",true,null,{}],"b":{"c":18446744073709551615}}"#).root.value
        #expect(
            value
                == .object([
                    JSONMember(
                        key: "a",
                        value: .array([.int(1), .int(-2), .double(3.5), .string("s"), .bool(true), .null, .object([])])),
                    JSONMember(key: "b", value: .object([JSONMember(key: "c", value: .uint(.max))])),
                ]))
        #expect(value["b"]?["c"] == .uint(.max))
        #expect(value["z"] == nil)
        #expect(JSONValue.int(1)["a"] == nil)
    }

    @Test func largeDocument() throws {
        var writer = JSONWriter()
        writer.beginArray()
        for i in 0..<10_000 {
            writer.beginObject()
            writer.field("i", i)
            writer.field("s", "item \(i)")
            writer.endObject()
        }
        writer.endArray()
        let root = try JSONParser().parse(writer.bytes).root
        #expect(root.count == 10_000)
        var sum = 0
        for (position, element) in root.elements.enumerated() {
            #expect(element["s"]?.stringEquals("item \(position)") == true)
            sum += Int(element["i"]?.int64 ?? 0)
        }
        #expect(sum == 10_000 * 9_999 / 2)
        #expect(root[9_999]?["i"]?.int64 == 9_999)
    }

    @Test func documentIsSendableAcrossTasks() async throws {
        let document = self.document
        let name = await Task.detached { document.root["name"]?.string }.value
        #expect(name == "checkout")
    }
}
