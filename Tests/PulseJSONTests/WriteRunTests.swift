import PulseJSON
import Testing

/// ``JSONWriter/withRun(_:)`` and ``JSONWriter/key(verbatim:)``: the same bytes as the writer's
/// other methods, growth inside a run, and copy-on-write across a run.
@Suite struct WriteRunTests {
    /// Every token kind once, with escapes, nesting and commas (the expected bytes are those the
    /// writer's own methods write, `WriterTests`).
    private static func tokens(_ w: inout JSONWriter.Run) {
        w.beginObject()
        w.key(verbatim: "id")
        w.string("a\"b\\c\n\u{1}é\u{2028}")
        w.key("n")
        w.int(-42)
        Array("u\u{7}".utf8).withUnsafeBufferPointer { w.key(utf8: $0) }
        w.uint(UInt64.max)
        w.key(verbatim: "list")
        w.beginArray()
        w.double(0.1)
        w.double(.nan)
        w.bool(true)
        w.bool(false)
        w.null()
        Array("{\"x\":1}".utf8).withUnsafeBufferPointer { w.raw(utf8: $0) }
        Array("plain".utf8).withUnsafeBufferPointer { w.string(utf8: $0) }
        w.endArray()
        w.endObject()
    }

    @Test(arguments: [false, true])
    func runWritesTheWritersBytes(escapesLineSeparators: Bool) {
        let inRun = written(escapesLineSeparators: escapesLineSeparators) { writer in
            writer.withRun { Self.tokens(&$0) }
        }
        let separator = escapesLineSeparators ? "\\u2028" : "\u{2028}"
        #expect(
            inRun
                == #"{"id":"a\"b\\c\n\u0001é"# + separator
                + #"","n":-42,"u\u0007":18446744073709551615,"list":[0.1,null,true,false,null,{"x":1},"plain"]}"#)
    }

    /// A verbatim key writes what ``JSONWriter/key(_:)`` writes for it, after a comma or not, in
    /// either setting, through the writer and through a run.
    @Test(arguments: [false, true])
    func verbatimKeysMatchEscapedKeys(escapesLineSeparators: Bool) {
        let keys: [StaticString] = [
            "", "a", "id", "kind", "source", "sessionId", "imageUuid", "attributes",
            "exceptionType", "pulsegate.clock_offset_ms", "a key with spaces/and:punctuation{}[]", "é😀",
        ]
        for key in keys {
            let text = key.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
            let expected = written(escapesLineSeparators: escapesLineSeparators) {
                $0.beginObject()
                $0.key(text)
                $0.int(1)
                $0.key(text)
                $0.int(2)
                $0.endObject()
            }
            let verbatim = written(escapesLineSeparators: escapesLineSeparators) {
                $0.beginObject()
                $0.key(verbatim: key)
                $0.int(1)
                $0.key(verbatim: key)
                $0.int(2)
                $0.endObject()
            }
            let inRun = written(escapesLineSeparators: escapesLineSeparators) { writer in
                writer.withRun { run in
                    run.beginObject()
                    run.key(verbatim: key)
                    run.int(1)
                    run.key(verbatim: key)
                    run.int(2)
                    run.endObject()
                }
            }
            #expect(verbatim == expected)
            #expect(inRun == expected)
        }
    }

    /// Commas are put between values across the run's start and end, as between any two writes.
    @Test func commasAcrossRunBoundaries() {
        let text = written { writer in
            writer.beginArray()
            writer.int(1)
            writer.withRun { run in
                run.int(2)
                run.beginObject()
            }
            writer.key("k")
            writer.withRun { run in
                run.int(3)
                run.endObject()
            }
            writer.withRun { _ in }
            writer.int(4)
            writer.endArray()
        }
        #expect(text == #"[1,2,{"k":3},4]"#)
    }

    /// The output grows inside a run (from the smallest buffer), as it does outside one.
    @Test func growsInsideARun() {
        var writer = JSONWriter(capacity: 1)
        let counts = writer.withRun { run in
            var counts: [Int] = []
            run.beginArray()
            for i in 0..<5_000 {
                run.string("element \(i) \u{1}")
                counts.append(run.count)
            }
            run.endArray()
            return counts
        }
        // Each count is where the element ended: every byte before it was kept through the growth.
        let elements = (0..<5_000).map { #""element \#($0) \u0001""# }
        let expected = "[" + elements.joined(separator: ",") + "]"
        #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
        var end = 1
        var ends: [Int] = []
        for (i, element) in elements.enumerated() {
            end += (i > 0 ? 1 : 0) + element.utf8.count
            ends.append(end)
        }
        #expect(counts == ends)
    }

    /// A copy of the writer taken before a run keeps its bytes: the run writes into a copy of the
    /// shared output, also when it grows; a copy taken after a run is independent of the next one.
    @Test func copiesSurviveARun() {
        var writer = JSONWriter(capacity: 16)
        writer.beginArray()
        writer.string("kept")
        let before = writer
        writer.withRun { run in
            run.string("run")
            for _ in 0..<20 { run.string("0123456789") }
        }
        #expect(String(decoding: before.bytes, as: UTF8.self) == #"["kept""#)
        let after = writer
        writer.reset()
        writer.withRun { run in run.string("other") }
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #""other""#)
        #expect(after.count == 7 + 6 + 20 * 13)
        #expect(String(decoding: after.bytes, as: UTF8.self).hasPrefix(#"["kept","run","0123456789""#))
        var grown = before
        grown.withRun { run in
            run.string("x")
            run.endArray()
        }
        #expect(String(decoding: grown.bytes, as: UTF8.self) == #"["kept","x"]"#)
        #expect(String(decoding: before.bytes, as: UTF8.self) == #"["kept""#)
    }

    private struct Stop: Error, Equatable {}

    /// A run's body may throw (typed); the writer keeps what the run wrote before and stays usable.
    @Test func aThrowingRunLeavesItsWrites() {
        var writer = JSONWriter()
        writer.beginArray()
        #expect(throws: Stop()) {
            try writer.withRun { (run) throws(Stop) in
                run.int(1)
                throw Stop()
            }
        }
        writer.int(2)
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[1,2]")
    }
}
