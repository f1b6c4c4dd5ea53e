import PulseHTTP
import Testing

@Suite struct HTTPHeadersTests {
    @Test func lookupIsCaseInsensitiveAndKeepsOrder() {
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        headers.add(name: "X-Tag", value: "one")
        headers.add(name: "x-tag", value: "two")
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.values(for: "X-TAG") == ["one", "two"])
        #expect(headers.contains("x-Tag"))
        #expect(headers["missing"] == nil)
        #expect(headers.map(\.name) == ["Content-Type", "X-Tag", "x-tag"])
    }

    @Test func setReplacesAndRemoveDeletesAllSpellings() {
        var headers: HTTPHeaders = ["X-A": "1", "x-a": "2", "X-B": "3"]
        headers.set(name: "X-a", value: "9")
        #expect(headers.values(for: "x-a") == ["9"])
        headers.remove(name: "X-B")
        #expect(headers.count == 1)
        #expect(!headers.contains("x-b"))
    }

    @Test func namesThatOnlyShareAPrefixDiffer() {
        let headers: HTTPHeaders = ["Content-Length": "1"]
        #expect(headers["Content-Len"] == nil)
        #expect(headers["Content-Length2"] == nil)
    }

    @Test func statusCodesAreClamped() {
        #expect(HTTPStatus(code: 42) == .internalServerError)
        #expect(HTTPStatus(code: 429) == .tooManyRequests)
        #expect(HTTPStatus.accepted.isSuccess)
        #expect(!HTTPStatus.serviceUnavailable.isSuccess)
    }
}
