import PulseProtocol
import Testing

@Suite struct EnvelopeCodecTests {
    @Test func missingCodeDecodesAsZero() throws {
        let envelope = try fastDecode(PulseEnvelope<Bool>.self, #"{"data":true}"#)
        #expect(envelope.code == 0)
        #expect(envelope.msg == nil)
        #expect(envelope.confirmsAcceptance)
        let nullCode = try fastDecode(PulseEnvelope<Bool>.self, #"{"code":null,"msg":null,"data":true}"#)
        #expect(nullCode.code == 0)
    }

    @Test func unknownCodesDecodeWithoutLoss() throws {
        let envelope = try fastDecode(PulseEnvelope<Bool>.self, #"{"code":418,"msg":"teapot","data":null}"#)
        #expect(envelope.code == 418)
        #expect(envelope.knownCode == nil)
        #expect(envelope.senderAction == .doNotRetryUnchanged)
        #expect(!envelope.isSuccess)
        #expect(try fastRoundTrip(envelope) == envelope)
    }

    @Test func failureDataOfAnotherShapeIsIgnored() throws {
        let envelope = try fastDecode(
            PulseEnvelope<Bool>.self, #"{"code":503,"msg":"queue down","data":{"retryAfterMs":500}}"#)
        #expect(envelope.knownCode == .unavailable)
        #expect(envelope.data == nil)
        #expect(envelope.msg == "queue down")
        // On success the data must match the payload type.
        #expect(throws: (any Error).self) {
            try fastDecode(PulseEnvelope<Bool>.self, #"{"code":0,"msg":null,"data":{"x":1}}"#)
        }
    }

    @Test func encodesEveryFieldWithExplicitNulls() throws {
        #expect(fastJSON(PulseEnvelope<Bool>.accepted) == #"{"code":0,"msg":null,"data":true}"#)
        #expect(
            fastJSON(PulseEnvelope<Bool>.failure(.notImplemented, "CLIENT_CONFIG_PULL is not implemented"))
                == #"{"code":501,"msg":"CLIENT_CONFIG_PULL is not implemented","data":null}"#)
        #expect(fastJSON(PulseEnvelope<Bool>.ok(nil)) == #"{"code":0,"msg":null,"data":null}"#)
    }

    @Test func acceptanceNeedsCodeZeroAndDataTrue() throws {
        #expect(PulseEnvelope<Bool>.accepted.confirmsAcceptance)
        #expect(!PulseEnvelope<Bool>.ok(false).confirmsAcceptance)
        #expect(!PulseEnvelope<Bool>.ok(nil).confirmsAcceptance)
        #expect(!PulseEnvelope<Bool>(code: 429, msg: nil, data: true).confirmsAcceptance)
    }

    @Test func unknownKeysAreIgnored() throws {
        let envelope = try fastDecode(
            PulseEnvelope<Bool>.self, #"{"code":0,"msg":null,"data":true,"traceId":"abc","extra":{"a":[1]}}"#)
        #expect(envelope == .accepted)
    }
}
