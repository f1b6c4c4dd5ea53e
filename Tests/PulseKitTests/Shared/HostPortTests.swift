import PulseKit
import Testing

@Suite("HostPort")
struct HostPortTests {
    @Test("parse: IPv4, names, bracketed IPv6 and the port range ends")
    func parses() throws {
        #expect(try HostPort.parse("127.0.0.1:6000", allowsUnbracketedIPv6: false) == ("127.0.0.1", 6000))
        #expect(try HostPort.parse("upstream.example:0", allowsUnbracketedIPv6: false) == ("upstream.example", 0))
        #expect(try HostPort.parse("[::1]:65535", allowsUnbracketedIPv6: false) == ("::1", 65535))
    }

    @Test("parse: an unbracketed IPv6 host only where the caller allows it (the port after the last colon)")
    func unbracketedIPv6() throws {
        #expect(try HostPort.parse("::1:6000", allowsUnbracketedIPv6: true) == ("::1", 6000))
        #expect(throws: HostPort.Problem.unbracketedIPv6) {
            try HostPort.parse("::1:6000", allowsUnbracketedIPv6: false)
        }
    }

    @Test(
        "parse: names each malformed shape",
        arguments: [
            ("[::1", HostPort.Problem.unclosedBracket), ("[::1]6000", .noPortAfterBracket),
            ("[::1]", .noPortAfterBracket),
            ("localhost", .noPort), (":6000", .noHost), ("[]:6000", .noHost), ("a:65536", .invalidPort),
            ("a:-1", .invalidPort), ("a:", .invalidPort), ("a:x", .invalidPort),
        ])
    func problems(text: String, problem: HostPort.Problem) {
        #expect(throws: problem) { try HostPort.parse(Substring(text), allowsUnbracketedIPv6: true) }
    }

    @Test("text: brackets exactly the hosts with a colon, and parse reads it back")
    func text() throws {
        #expect(HostPort.text(host: "10.0.0.1", port: 80) == "10.0.0.1:80")
        #expect(HostPort.text(host: "fe80::1", port: 443) == "[fe80::1]:443")
        let parsed = try HostPort.parse(
            Substring(HostPort.text(host: "fe80::1", port: 443)), allowsUnbracketedIPv6: false)
        #expect(parsed == ("fe80::1", 443))
    }
}
