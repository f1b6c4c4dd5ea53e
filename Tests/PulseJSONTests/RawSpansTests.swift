import PulseJSON
import Testing

/// `JSONRawSpans`: the bytes of each element of a root member's array, exactly as written.
@Suite struct RawSpansTests {
    private func elements(_ text: String, _ key: String) throws -> [String]? {
        let bytes = Array(text.utf8)
        _ = try JSONParser().parse(bytes)  // the precondition: a text the parser accepted
        return JSONRawSpans.arrayElements(ofMember: key, in: bytes)?.map {
            String(decoding: bytes[$0], as: UTF8.self)
        }
    }

    @Test func elementsAsWritten() throws {
        let text = #"""
             { "identity" : {"a":[1,{"events":[9]}],"s":"] } \" {"} ,
              "events" : [ {"id":"x","n":1.50,"s":"a\"]},[{"} ,
            {"id" : "y", "nested":[[],{}], "e":"\u00e9"}	,"plain",-1.5e3,true,null,[1,[2]] ] , "batchId":"b" }
            """#
        #expect(
            try elements(text, "events") == [
                #"{"id":"x","n":1.50,"s":"a\"]},[{"}"#,
                #"{"id" : "y", "nested":[[],{}], "e":"\u00e9"}"#,
                #""plain""#, "-1.5e3", "true", "null", "[1,[2]]",
            ])
        #expect(try elements(text, "batchId") == nil)  // not an array
        #expect(try elements(text, "missing") == nil)
    }

    @Test func emptyArrayAndFirstDuplicateWins() throws {
        #expect(try elements(#"{"events":[]}"#, "events") == [])
        // (Not parsed first: whether a parser accepts duplicate names is its own rule.)
        let duplicated = Array(#"{"events":[1],"events":[2,3]}"#.utf8)
        #expect(JSONRawSpans.arrayElements(ofMember: "events", in: duplicated) == [11..<12])
    }

    /// A root member written with escapes cannot be matched byte for byte: `nil`, so the caller
    /// falls back to re-encoding.
    @Test func escapedMemberNamesAreNotGuessed() throws {
        #expect(try elements(#"{"\u0065vents":[1]}"#, "events") == nil)
        #expect(try elements(#"{"x\"y":1,"events":[1]}"#, "events") == nil)
        #expect(try elements(#"[{"events":[1]}]"#, "events") == nil)
        #expect(try elements(#""events""#, "events") == nil)
    }

    /// Not-JSON never crashes or yields a range outside the text.
    @Test func malformedInputStaysInBounds() {
        for text in [#"{"events":["#, #"{"events":[{"a":"#, #"{"events":[1,"#, "{", "", #"{"events":[1"#, #"{"e\"#] {
            let bytes = Array(text.utf8)
            for range in JSONRawSpans.arrayElements(ofMember: "events", in: bytes) ?? [] {
                #expect(range.lowerBound >= 0 && range.upperBound <= bytes.count)
            }
        }
    }
}
