import PulseProtocol
import Testing

@Suite struct SessionModelCodecTests {
    static let connect = ConnectRequest(
        appId: "app_42", deviceId: "dev-1", installationId: "inst-1", platform: "ios", deviceType: "phone",
        packageName: nil, appVersion: nil, buildNumber: 0, sdkVersion: "2.3.0",
        capabilities: ["batch_upload", "compression:zstd", "bidirectional_request"])

    @Test func connectRoundTripsAndWritesNulls() throws {
        #expect(try fastRoundTrip(Self.connect) == Self.connect)
        let json = fastJSON(Self.connect)
        #expect(json.contains(#""packageName":null"#))
        #expect(json.contains(#""appVersion":null"#))
        #expect(json.contains(#""buildNumber":0"#))
    }

    @Test func connectDefaultsAndUnknownKeys() throws {
        let decoded = try fastDecode(
            ConnectRequest.self,
            #"{"protocolVersion":2,"appId":"app_42","deviceId":"dev-1","installationId":"inst-1","platform":"ios","#
                + #""deviceType":"phone","sdkVersion":"2.3.0","futureField":{"nested":[1,2]},"keyId":"k1"}"#)
        #expect(decoded.buildNumber == 0)
        #expect(decoded.capabilities == [])
        #expect(decoded.packageName == nil)
        #expect(throws: (any Error).self) {
            try fastDecode(ConnectRequest.self, #"{"protocolVersion":2,"appId":"a"}"#)
        }
    }

    @Test func connectResultDefaults() throws {
        let decoded = try fastDecode(
            ConnectResult.self,
            #"{"connected":true,"protocolVersion":2,"connectionId":"c-1","serverTimeMs":1700000000000}"#)
        #expect(decoded.configRevision == 0)
        #expect(decoded.heartbeatIntervalMs == 60_000)
        #expect(decoded.collectKinds == [])
        let full = ConnectResult(
            connectionId: "c-1", serverTimeMs: 1_700_000_000_000, configRevision: 7, collectKinds: [.crash, .error])
        #expect(try fastRoundTrip(full) == full)
    }

    @Test func heartbeatRoundTripsAndClamps() throws {
        let request = HeartbeatRequest(connectionId: "c-1", clientTimeMs: 1_700_000_000_123, sdkVersion: "2.3.0")
        #expect(try fastRoundTrip(request) == request)
        let result = try fastDecode(HeartbeatResult.self, #"{"accepted":true,"serverTimeMs":5}"#)
        #expect(result.heartbeatIntervalMs == 60_000)
        #expect(result.clampedHeartbeatIntervalMs == 60_000)
        #expect(HeartbeatResult(serverTimeMs: 0, heartbeatIntervalMs: 1_000).clampedHeartbeatIntervalMs == 15_000)
        #expect(HeartbeatResult(serverTimeMs: 0, heartbeatIntervalMs: 3_600_000).clampedHeartbeatIntervalMs == 300_000)
        #expect(try fastRoundTrip(result) == result)
    }

    @Test func collectKindsRejectUnknownKinds() {
        #expect(throws: PulseProtocolError.self) {
            try fastDecode(
                ConnectResult.self,
                #"{"connected":true,"protocolVersion":2,"connectionId":"c","serverTimeMs":1,"collectKinds":["analytics"]}"#
            )
        }
    }
}
