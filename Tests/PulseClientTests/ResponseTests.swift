import PulseClient
import PulseJSON
import PulseProtocol
import Testing

@Suite("Response envelopes and upload outcomes")
struct ResponseTests {
    private func response(_ json: String) throws -> PulseResponse {
        try PulseResponse(bizType: .clientEventBatchUpload, payload: bytes(json))
    }

    @Test("only code 0 with data true is an acceptance")
    func uploadOutcomes() throws {
        #expect(PulseUploadOutcome(try response(#"{"code":0,"msg":null,"data":true}"#)) == .accepted)
        for json in [
            #"{"code":0,"msg":null,"data":false}"#, #"{"code":0,"data":null}"#, #"{"code":0}"#, #"{}"#,
            #"{"code":0,"data":"true"}"#,
        ] {
            let outcome = PulseUploadOutcome(try response(json))
            guard case .unconfirmed = outcome else {
                Issue.record("\(json) must not count as accepted")
                continue
            }
            #expect(!outcome.isAccepted)
        }
        guard
            case .rejected(let rejected) = PulseUploadOutcome(
                try response(#"{"code":503,"msg":"queue down","data":true}"#))
        else {
            Issue.record("a non-zero code is a rejection")
            return
        }
        #expect(rejected.knownCode == .unavailable)
        #expect(rejected.msg == "queue down")
        #expect(rejected.senderAction == .retryWithBackoff)
    }

    @Test("envelope fields decode; unknown keys are ignored; unknown codes keep their number")
    func envelopeFields() throws {
        let decoded = try response(#"{"extra":[1],"code":599,"msg":"odd","data":{"a":1}}"#)
        #expect(decoded.code == 599)
        #expect(decoded.knownCode == nil)
        #expect(decoded.senderAction == .retryWithBackoff)
        #expect(decoded.data == .object([JSONMember(key: "a", value: .int(1))]))
        #expect(try response(#"{"code":0,"msg":null,"data":null}"#).data == nil)
        #expect(try response(#"{"code":0,"msg":null,"data":null}"#).isSuccess)
    }

    @Test("payloads that are not envelopes are malformed responses")
    func malformed() {
        for text in ["", "not json", "[1]", #"{"code":"zero"}"#] {
            #expect(throws: PulseClientError.self) { try response(text) }
        }
    }

    @Test("typed data decodes from the payload")
    func typedData() throws {
        let payload = PulseEnvelope.ok(HeartbeatResult(serverTimeMs: 5, configRevision: 2)).encodeJSON()
        let decoded = try PulseResponse(bizType: .clientHeartbeat, payload: payload)
        let result = try decoded.decodeData(as: HeartbeatResult.self)
        #expect(result.configRevision == 2)
        #expect(throws: PulseClientError.self) { try decoded.decodeData(as: ConfigSnapshot.self) }
    }
}
