import PulseProtocol
import Testing

@Suite struct UpdateCheckCodecTests {
    static let offer = UpdateCheckResult(
        action: .optional, latestVersionName: "2.4.0", latestBuildNumber: 240, releaseNotes: "Faster sync",
        downloadUrl: "https://apps.example/app")

    @Test func requestRoundTrips() throws {
        let request = UpdateCheckRequest(
            platform: "ios", appKey: "app_42", packageName: "com.example.app", buildNumber: 231)
        #expect(try fastRoundTrip(request) == request)
    }

    @Test func responseWritesTheRootCompatibilityCopy() throws {
        let response = UpdateCheckResponse(envelope: .ok(Self.offer))
        let json = fastJSON(response)
        // Canonical order: code/msg/data, then the five update fields again at the root.
        #expect(
            json
                == #"{"code":0,"msg":null,"data":{"action":"optional","latestVersionName":"2.4.0","#
                + #""latestBuildNumber":240,"releaseNotes":"Faster sync","downloadUrl":"https://apps.example/app"},"#
                + #""action":"optional","latestVersionName":"2.4.0","latestBuildNumber":240,"#
                + #""releaseNotes":"Faster sync","downloadUrl":"https://apps.example/app"}"#)
        let decoded = try fastDecode(UpdateCheckResponse.self, json)
        #expect(decoded == response)
        #expect(decoded.rootCopy == Self.offer)
        #expect(decoded.decision == Self.offer)
    }

    @Test func newCodeReadsDataNotTheRootCopy() throws {
        let decoded = try fastDecode(
            UpdateCheckResponse.self,
            #"{"code":0,"msg":null,"data":{"action":"none"},"action":"forced","latestBuildNumber":999}"#)
        #expect(decoded.decision.action == .none)
        #expect(decoded.rootCopy?.action == .forced)
        let withoutRoot = try fastDecode(UpdateCheckResponse.self, #"{"code":0,"msg":null,"data":null}"#)
        #expect(withoutRoot.rootCopy == nil)
        #expect(withoutRoot.decision == .noUpdate)
    }

    @Test func failuresFailOpen() throws {
        let failure = UpdateCheckResponse(envelope: .failure(.unavailable, "update service down"))
        #expect(failure.decision == .noUpdate)
        let json = fastJSON(failure)
        #expect(json == #"{"code":503,"msg":"update service down","data":null}"#)
    }

    @Test func unknownOrMissingActionMeansNone() throws {
        #expect(try fastDecode(UpdateCheckResult.self, #"{"action":"mandatory"}"#).action == .none)
        #expect(try fastDecode(UpdateCheckResult.self, #"{}"#) == .noUpdate)
        #expect(fastJSON(UpdateCheckResult.noUpdate).contains(#""downloadUrl":null"#))
    }
}
