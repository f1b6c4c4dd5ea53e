import PulseProtocol
import Testing

@Suite struct UpdateCheckCodableTests {
    static let offer = UpdateCheckResult(
        action: .optional, latestVersionName: "2.4.0", latestBuildNumber: 240, releaseNotes: "Faster sync",
        downloadUrl: "https://apps.example/app")

    @Test func requestRoundTrips() throws {
        let request = UpdateCheckRequest(
            platform: "ios", appKey: "app_42", packageName: "com.example.app", buildNumber: 231)
        #expect(try codableRoundTrip(request) == request)
    }

    @Test func responseWritesTheRootCompatibilityCopy() throws {
        let response = UpdateCheckResponse(envelope: .ok(Self.offer))
        let json = try codableJSON(response)
        // Sorted keys: the five update fields appear at the root next to code/msg/data.
        #expect(
            json
                == #"{"action":"optional","code":0,"data":{"action":"optional","downloadUrl":"https://apps.example/app","#
                + #""latestBuildNumber":240,"latestVersionName":"2.4.0","releaseNotes":"Faster sync"},"#
                + #""downloadUrl":"https://apps.example/app","latestBuildNumber":240,"latestVersionName":"2.4.0","#
                + #""msg":null,"releaseNotes":"Faster sync"}"#)
        let decoded = try codableDecode(UpdateCheckResponse.self, json)
        #expect(decoded == response)
        #expect(decoded.rootCopy == Self.offer)
        #expect(decoded.decision == Self.offer)
    }

    @Test func newCodeReadsDataNotTheRootCopy() throws {
        let decoded = try codableDecode(
            UpdateCheckResponse.self,
            #"{"code":0,"msg":null,"data":{"action":"none"},"action":"forced","latestBuildNumber":999}"#)
        #expect(decoded.decision.action == .none)
        #expect(decoded.rootCopy?.action == .forced)
        let withoutRoot = try codableDecode(UpdateCheckResponse.self, #"{"code":0,"msg":null,"data":null}"#)
        #expect(withoutRoot.rootCopy == nil)
        #expect(withoutRoot.decision == .noUpdate)
    }

    @Test func failuresFailOpen() throws {
        let failure = UpdateCheckResponse(envelope: .failure(.unavailable, "update service down"))
        #expect(failure.decision == .noUpdate)
        let json = try codableJSON(failure)
        #expect(json == #"{"code":503,"data":null,"msg":"update service down"}"#)
    }

    @Test func unknownOrMissingActionMeansNone() throws {
        #expect(try codableDecode(UpdateCheckResult.self, #"{"action":"mandatory"}"#).action == .none)
        #expect(try codableDecode(UpdateCheckResult.self, #"{}"#) == .noUpdate)
        #expect(try codableJSON(UpdateCheckResult.noUpdate).contains(#""downloadUrl":null"#))
    }
}
