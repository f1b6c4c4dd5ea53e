import Foundation
import PulseHTTP
import PulseKit
import PulseTestSupport
import Testing

@testable import PulseGateway

/// `trustedProxies`: the config key, and the client address in the gateway's logs.
@Suite struct ClientAddressTests {
    static let body = OTLP.logs(records: [OTLP.record(1_700_000_000)])

    @Test func theConfigKeyTakesAddressesAndBlocks() throws {
        let file = try ConfigurationFile(
            parsing: Array(#"{"trustedProxies":["127.0.0.1","10.0.0.0/8","::1","fd00::/8"]}"#.utf8))
        let policy = file.policy()
        #expect(
            policy.trustedProxies.networks.map(\.description) == ["127.0.0.1/32", "10.0.0.0/8", "::1/128", "fd00::/8"])
        #expect(try ConfigurationFile(parsing: Array("{}".utf8)).policy().trustedProxies.isEmpty)
    }

    @Test(arguments: [
        #"{"trustedProxies":"127.0.0.1"}"#, #"{"trustedProxies":[1]}"#, #"{"trustedProxies":["proxy.local"]}"#,
        #"{"trustedProxies":["10.0.0.1/8"]}"#,
    ])
    func badValuesAreConfigurationErrors(json: String) {
        #expect {
            try ConfigurationFile(parsing: Array(json.utf8))
        } throws: { error in
            (error as? GatewayError)?.code == .invalidConfiguration && "\(error)".contains("trustedProxies")
        }
    }

    /// The `client` field of the log lines whose `msg` is `message`.
    static func clients(_ message: String, in logs: LogCollector) -> [String] {
        logs.all.filter { $0.contains(#""msg":"\#(message)""#) }.compactMap { line in
            guard let range = line.range(of: #""client":""#) else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    @Test func logsNameTheForwardedClientOnlyBehindATrustedProxy() async throws {
        let trusted = GatewayPolicy(trustedProxies: try TrustedProxies(["127.0.0.0/8"]))
        let harness = try await GatewayHarness.start(policy: trusted)
        defer { harness.directory.remove() }
        let forwarded = [("X-Forwarded-For", "6.6.6.6, 198.51.100.7")]
        #expect(try await harness.post(Self.body, batchID: "c-1", extraHeaders: forwarded).status == 200)
        // A conflict is logged at warning level with the client.
        let other = OTLP.logs(records: [OTLP.record(1_700_000_001)])
        #expect(
            try await harness.post(other, batchID: "c-1", extraHeaders: forwarded).header(GatewayIntake.conflictHeader)
                == "true")
        #expect(Self.clients("request", in: harness.logs) == ["198.51.100.7", "198.51.100.7"])
        #expect(
            Self.clients("batch id reused with a different body; stored as its own batch", in: harness.logs) == [
                "198.51.100.7"
            ])

        // Without trust (a reload), the same header is ignored: the peer is the client.
        var untrusted = harness.gateway.policy
        untrusted.trustedProxies = try TrustedProxies(["10.0.0.0/8"])
        try harness.gateway.reload(untrusted)
        #expect(try await harness.post(Self.body, batchID: "c-2", extraHeaders: forwarded).status == 200)
        #expect(Self.clients("request", in: harness.logs).last == "127.0.0.1")
        await harness.stop(removing: false)
    }
}
