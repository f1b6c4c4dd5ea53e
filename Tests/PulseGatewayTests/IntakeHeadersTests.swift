import PulseHTTP
import Testing

@testable import PulseGateway

@Suite struct IntakeHeadersTests {
    @Test(arguments: ["a", "b-1.x_y~z:9", String(repeating: "A", count: 128)])
    func validIdentifiers(value: String) {
        #expect(IntakeHeaders.isValidIdentifier(value))
    }

    @Test(arguments: ["", "with space", "slash/", "é", String(repeating: "A", count: 129), "quote\""])
    func invalidIdentifiers(value: String) {
        #expect(!IntakeHeaders.isValidIdentifier(value))
    }

    @Test func timestamps() {
        #expect(IntakeHeaders.parseTimestamp("1700000000123") == 1_700_000_000_123)
        #expect(IntakeHeaders.parseTimestamp("2023-11-14T22:13:20Z") == 1_700_000_000_000)
        #expect(IntakeHeaders.parseTimestamp("2023-11-14T22:13:20.123Z") == 1_700_000_000_123)
        #expect(IntakeHeaders.parseTimestamp("2023-11-14T22:13:20.1234567Z") == 1_700_000_000_123)
        #expect(IntakeHeaders.parseTimestamp("2023-11-15T00:13:20+02:00") == 1_700_000_000_000)
        #expect(IntakeHeaders.parseTimestamp("2023-11-14T21:13:20-01:00") == 1_700_000_000_000)
        #expect(IntakeHeaders.parseTimestamp("1969-12-31T23:59:59Z") == -1000)
        for bad in [
            "", "yesterday", "2023-11-14", "2023-11-14T22:13:20", "2023-13-14T22:13:20Z", "2023-02-30T00:00:00Z",
            "12345678901234567",
        ] {
            #expect(IntakeHeaders.parseTimestamp(bad) == nil, "\(bad)")
        }
    }

    @Test func appIDDefaultAllowListAndFallbacks() throws {
        let policy = GatewayPolicy(defaultAppID: "shop", allowedAppIDs: ["shop", "news"])
        let defaulted = try IntakeHeaders(["Apsio-Device-Id": "d1", "Apsio-Platform": "Android"], policy: policy)
        #expect(defaulted.appID == "shop")
        #expect(defaulted.batchID == nil)
        #expect(defaulted.fallbacks.deviceID == "d1")
        #expect(defaulted.fallbacks.platform == "android")
        let forbidden = #expect(throws: IntakeRejection.self) {
            try IntakeHeaders(["Apsio-App-Id": "other"], policy: policy)
        }
        #expect(forbidden?.status == .forbidden)
        let missing = #expect(throws: IntakeRejection.self) {
            try IntakeHeaders([:], policy: GatewayPolicy())
        }
        #expect(missing?.status == .badRequest)
        #expect(missing?.message.contains("Apsio-App-Id") == true)
    }
}
