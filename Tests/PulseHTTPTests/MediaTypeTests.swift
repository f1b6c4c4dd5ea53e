import PulseHTTP
import Testing

@Suite struct MediaTypeTests {
    @Test func parsesTypeSubtypeAndParameters() throws {
        let media = try #require(MediaType.parse("application/json; charset=utf-8"))
        #expect(media.type == "application")
        #expect(media.subtype == "json")
        #expect(media.parameters == ["charset": "utf-8"])
        #expect(media.essence == "application/json")
        #expect(media.matches(.json))
        #expect(!media.matches(.protobuf))
    }

    @Test func isCaseInsensitiveExceptForValues() throws {
        let media = try #require(MediaType.parse("Application/X-Protobuf;CharSet=UTF-8"))
        #expect(media == MediaType(type: "application", subtype: "x-protobuf", parameters: ["charset": "UTF-8"]))
        #expect(media.parameter("CHARSET") == "UTF-8")
        #expect(media.matches(.protobuf))
    }

    @Test func unquotesQuotedValues() throws {
        let media = try #require(MediaType.parse(#"multipart/form-data ; boundary="a;b \"c\"" ; x=1"#))
        #expect(media.parameter("boundary") == #"a;b "c""#)
        #expect(media.parameter("x") == "1")
    }

    @Test func toleratesWhitespaceAndEmptyParameters() throws {
        let media = try #require(MediaType.parse("  text/plain ;; charset=us-ascii ;  "))
        #expect(media.essence == "text/plain")
        #expect(media.parameters == ["charset": "us-ascii"])
    }

    @Test func firstOfRepeatedParametersWins() throws {
        let media = try #require(MediaType.parse("text/plain; a=1; A=2"))
        #expect(media.parameter("a") == "1")
    }

    @Test func wildcardsMatch() throws {
        let media = try #require(MediaType.parse("application/json"))
        #expect(media.matches(MediaType(type: "*", subtype: "*")))
        #expect(media.matches(MediaType(type: "application", subtype: "*")))
        #expect(!media.matches(MediaType(type: "text", subtype: "*")))
    }

    @Test(arguments: [
        "", "application", "application/", "/json", "application /json", "app lication/json",
        "application/json; charset", "application/json; =utf-8", "application/json; charset=",
        #"application/json; charset="utf-8"#, "application/json charset=utf-8", "application/json; a=b c",
        "text/plain; a=\"x\u{01}\"",
    ])
    func rejectsMalformedValues(text: String) {
        #expect(MediaType.parse(text) == nil)
    }

    @Test func describesItselfCanonically() throws {
        let media = try #require(MediaType.parse(#"Text/Plain; B="x y"; a=1"#))
        #expect(media.description == #"text/plain; a=1; b="x y""#)
        #expect(MediaType.parse(media.description) == media)
    }
}
