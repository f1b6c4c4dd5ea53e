import PulseHTTP
import PulseKit
import PulseTestSupport
import Testing

@Suite struct TrustedProxiesTests {
    // MARK: - Addresses and blocks

    @Test(arguments: [
        ("192.0.2.7", "192.0.2.7"),
        ("::1", "::1"),
        ("[::1]", "::1"),
        ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
        ("0.0.0.0", "0.0.0.0"),
    ])
    func addressesParseToCanonicalText(input: String, canonical: String) throws {
        let address = try #require(IPAddress(input))
        #expect(address.description == canonical)
    }

    @Test(arguments: [
        "", "unknown", "example.com", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.4 ", " 1.2.3.4",
        "fe80::1%eth0", "[::1", "::1]", "1:2:3:4:5:6:7:8:9", "0x7f.0.0.1", "1.2.3.4/8",
    ])
    func nonAddressesAreRefused(input: String) {
        #expect(IPAddress(input) == nil)
    }

    @Test func ipv4AndMappedFormsAreTheSameAddress() throws {
        #expect(IPAddress("10.1.2.3") == IPAddress("::ffff:10.1.2.3"))
        #expect(try #require(IPAddress("::ffff:10.1.2.3")).isIPv4)
        #expect(try #require(IPAddress("::1")).isIPv4 == false)
    }

    @Test func blocksMatchTheirAddressesOnly() throws {
        let ten = try IPNetwork(parsing: "10.0.0.0/8")
        #expect(ten.contains(try #require(IPAddress("10.255.0.1"))))
        #expect(ten.contains(try #require(IPAddress("::ffff:10.0.0.9"))))
        #expect(!ten.contains(try #require(IPAddress("11.0.0.1"))))
        #expect(!ten.contains(try #require(IPAddress("::a00:1"))))  // IPv4-compatible, not mapped

        let odd = try IPNetwork(parsing: "192.168.4.0/22")
        #expect(odd.contains(try #require(IPAddress("192.168.7.255"))))
        #expect(!odd.contains(try #require(IPAddress("192.168.8.0"))))

        let v6 = try IPNetwork(parsing: "2001:db8::/33")
        #expect(v6.contains(try #require(IPAddress("2001:db8:7fff::1"))))
        #expect(!v6.contains(try #require(IPAddress("2001:db8:8000::1"))))
        #expect(!v6.contains(try #require(IPAddress("10.0.0.1"))))

        let single = try IPNetwork(parsing: "::1")
        #expect(single.prefixLength == 128)
        #expect(single.contains(try #require(IPAddress("::1"))))
        #expect(!single.contains(try #require(IPAddress("::2"))))
        #expect(try IPNetwork(parsing: "127.0.0.1").prefixLength == 32)

        let everything = try IPNetwork(parsing: "::/0")
        #expect(everything.contains(try #require(IPAddress("203.0.113.9"))))
        let allV4 = try IPNetwork(parsing: "0.0.0.0/0")
        #expect(allV4.contains(try #require(IPAddress("203.0.113.9"))))
        #expect(!allV4.contains(try #require(IPAddress("2001:db8::1"))))
        #expect(try IPNetwork(parsing: "fd00::/8").description == "fd00::/8")
    }

    @Test(arguments: [
        "10.0.0.1/8", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/ 8", "10.0.0.0/8/8",
        "localhost", "", "/8", "fd00::1/8",
    ])
    func badBlocksAreConfigurationErrors(input: String) {
        #expect {
            try IPNetwork(parsing: input)
        } throws: { error in
            (error as? HTTPServerError)?.code == .invalidConfiguration
        }
    }

    @Test func aBadEntryNamesItself() {
        #expect {
            try TrustedProxies(["127.0.0.1", "10.0.0.0/8", "proxy.internal"])
        } throws: { error in
            "\(error)".contains("proxy.internal")
        }
    }

    // MARK: - Selection

    static let proxies = try! TrustedProxies(["127.0.0.1", "10.0.0.0/8", "fd00::/8"])

    @Test func anUntrustedPeerIsTheClientWhateverTheHeaderSays() {
        #expect(Self.proxies.clientAddress(peer: "203.0.113.5", forwardedFor: ["198.51.100.1"]) == "203.0.113.5")
        #expect(Self.proxies.clientAddress(peer: "2001:db8::5", forwardedFor: ["198.51.100.1"]) == "2001:db8::5")
    }

    @Test func withoutTrustedProxiesTheHeaderIsIgnored() {
        #expect(TrustedProxies.none.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.1"]) == "127.0.0.1")
    }

    @Test func aTrustedPeerWithoutTheHeaderIsTheClient() {
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: []) == "127.0.0.1")
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: [""]) == "127.0.0.1")
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: [" , "]) == "127.0.0.1")
    }

    @Test func theRightMostUntrustedEntryIsTheClient() {
        // The client forged the first entry; the edge proxy appended the real peer; an inner proxy
        // appended the edge proxy.
        let chain = ["6.6.6.6, 198.51.100.7, 10.1.1.1"]
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: chain) == "198.51.100.7")
        // One proxy, one entry.
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.7"]) == "198.51.100.7")
        // IPv6 clients and proxies.
        #expect(
            Self.proxies.clientAddress(peer: "fd00::2", forwardedFor: ["2001:DB8::7,fd00::1"]) == "2001:db8::7")
    }

    @Test func severalHeaderFieldsAreOneListInOrder() {
        let fields = ["6.6.6.6", "198.51.100.7, 10.0.0.3", "10.0.0.4"]
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: fields) == "198.51.100.7")
    }

    @Test func entriesMayCarryPortsAndSpaces() {
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["\t198.51.100.7:5123 "]) == "198.51.100.7")
        #expect(
            Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["[2001:db8::7]:443, 10.0.0.1"])
                == "2001:db8::7")
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["[2001:db8::7]"]) == "2001:db8::7")
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["::ffff:198.51.100.7"]) == "198.51.100.7")
    }

    @Test func aMalformedEntryStopsAtTheLastVouchedAddress() {
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["unknown"]) == "127.0.0.1")
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.7, garbage"]) == "127.0.0.1")
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["unknown, 10.0.0.9"]) == "10.0.0.9")
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["1.2.3.4:99999"]) == "127.0.0.1")
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["[::1]x"]) == "127.0.0.1")
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["2001:db8::1:80:"]) == "127.0.0.1")
    }

    @Test func allTrustedMeansTheLeftMostEntry() {
        #expect(Self.proxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["10.0.0.7, 10.0.0.8"]) == "10.0.0.7")
    }

    // MARK: - Over HTTP

    static let echoClient: @Sendable (TrustedProxies) -> (@Sendable (HTTPRequest) async -> HTTPResponse) = {
        proxies in
        { request in
            HTTPResponse(status: .ok, body: Array((proxies.clientAddress(of: request) ?? "nil").utf8))
        }
    }

    @Test func theServerSeesTheForwardedClientOnlyFromATrustedPeer() async throws {
        let header = [("X-Forwarded-For", "6.6.6.6, 198.51.100.7")]
        let trusted = try TrustedProxies(["127.0.0.0/8"])
        let seen = try await withServer(handler: Self.echoClient(trusted)) { _, port in
            try await RawHTTPConnection.exchange(port: port, target: "/", headers: header).bodyText
        }
        #expect(seen == "198.51.100.7")

        let untrusted = try TrustedProxies(["10.0.0.0/8", "::1"])
        let ignored = try await withServer(handler: Self.echoClient(untrusted)) { _, port in
            try await RawHTTPConnection.exchange(port: port, target: "/", headers: header).bodyText
        }
        #expect(ignored == "127.0.0.1")
    }
}
