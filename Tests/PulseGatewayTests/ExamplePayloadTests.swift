import Foundation
import OTLPProtobuf
import Testing

@testable import PulseGateway

/// `docs/examples/otlp-logs.json` (the README's curl and the benchmark's payload) maps as documented.
@Suite struct ExamplePayloadTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/examples/otlp-logs.json").path

    @Test func exampleMapsToOneBatchOfTwentyEvents() throws {
        let data = try #require(FileManager.default.contents(atPath: Self.path))
        #expect((7_000...10_000).contains(data.count))
        let mapped = try OTLP.map(String(decoding: data, as: UTF8.self), signal: .logs, batchID: "readme-1")
        #expect(mapped.records == 20)
        #expect(mapped.rejected == 0)
        try #require(mapped.drafts.count == 1)
        let text = OTLP.text(mapped.drafts[0].payload)
        #expect(
            text.hasPrefix(
                #"{"identity":{"projectId":"shop","installationId":"inst-5b1c9e","deviceId":"6F1C2A9E-0B7D-4E2B-9F4A-3E1D2C0B9A87","userId":null,"appVersion":"2.4.1","buildNumber":241,"sdkVersion":"pulsekit/2.3.0","platform":"ios","packageName":"com.example.shop"},"events":["#
            ))
        let kinds = text.split(separator: #""kind":""#).dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(kinds.count == 20)
        #expect(kinds.filter { $0 == "Analytics" }.count == 11)
        #expect(kinds.filter { $0 == "Breadcrumb" }.count == 2)
        #expect(kinds.filter { $0 == "Runtime" }.count == 1)
        #expect(kinds.filter { $0 == "Error" }.count == 1)
        #expect(kinds.filter { $0 == "Log" }.count == 5)
        #expect(text.contains(#""http.request.header.authorization":"[REDACTED]""#))
        #expect(!text.contains("token=abc123"))
        #expect(text.contains(#""sessionId":"sess-91c2e07b""#))
    }
}
