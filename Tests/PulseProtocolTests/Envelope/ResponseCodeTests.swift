import PulseProtocol
import Testing

@Suite struct ResponseCodeTests {
    @Test func codesAndSenderActionsMatchTheContractTable() {
        let table: [(Int, PulseSenderAction, Bool)] = [
            (0, .complete, false),
            (400, .doNotRetryUnchanged, false),
            (401, .reauthenticateThenRetry, true),
            (403, .doNotRetryUntilPolicyChanges, false),
            (404, .doNotRetryUnchanged, false),
            (409, .pullConfigThenRetryOnce, true),
            (429, .retryWithBackoff, true),
            (500, .retryWithBackoff, true),
            (501, .doNotRetryUntilPeerChanges, false),
            (503, .retryWithBackoff, true),
        ]
        #expect(PulseResponseCode.allCases.map(\.rawValue) == table.map(\.0))
        for (raw, action, retryable) in table {
            let code = PulseResponseCode(rawValue: raw)
            #expect(code?.senderAction == action)
            #expect(code?.isRetryable == retryable)
            #expect(code?.meaning.isEmpty == false)
        }
    }

    @Test func unknownCodesGetAConservativeAction() {
        #expect(PulseResponseCode(rawValue: 418) == nil)
        #expect(PulseSenderAction.forCode(418) == .doNotRetryUnchanged)
        #expect(PulseSenderAction.forCode(502) == .retryWithBackoff)
        #expect(PulseSenderAction.forCode(-1) == .doNotRetryUnchanged)
        #expect(PulseSenderAction.forCode(409) == .pullConfigThenRetryOnce)
    }
}
