package import PulseJSON
import PulseKit
package import PulseProtocol

/// A decoded Pulse response: the envelope `{"code":…,"msg":…,"data":…}` plus the raw payload.
///
/// A non-zero ``code`` is an application answer, not a transport failure: the connection stays
/// usable and ``senderAction`` says what the sender does next.
package struct PulseResponse: Sendable, Hashable {
    /// The biz type of the request this answers (a peer may echo 0 instead; that is ignored).
    package var bizType: PulseBizType
    /// The result code; 0 means success.
    package var code: Int
    /// The server's explanation, normally set only for a non-zero code.
    package var msg: String?
    /// The envelope's `data`, or `nil` when it is absent or `null`.
    package var data: JSONValue?
    /// The plaintext payload as received.
    package var payload: [UInt8]

    /// Decodes the envelope in `payload`.
    ///
    /// - Throws: ``PulseClientError/Code/malformedResponse`` when the payload is not a JSON object
    ///   with an integer `code`.
    package init(bizType: PulseBizType, payload: [UInt8]) throws(PulseClientError) {
        let envelope: PulseEnvelope<ControlRPCResult>
        do {
            envelope = try PulseEnvelope<ControlRPCResult>(decodingJSON: payload)
        } catch {
            throw PulseClientError(
                .malformedResponse, "the response to \(bizType) is not a Pulse envelope", underlying: error)
        }
        self.bizType = bizType
        self.code = envelope.code
        self.msg = envelope.msg
        if let value = envelope.data?.value, value != .null {
            self.data = value
        } else {
            self.data = nil
        }
        self.payload = payload
    }

    /// Whether ``code`` is 0.
    package var isSuccess: Bool { code == PulseResponseCode.ok.rawValue }

    /// ``code`` as a known code, or `nil` for a code this build does not know.
    package var knownCode: PulseResponseCode? { PulseResponseCode(rawValue: code) }

    /// What the sender does next according to the contract (also defined for unknown codes).
    package var senderAction: PulseSenderAction { PulseSenderAction.forCode(code) }

    /// Decodes `data` as `T`, re-reading ``payload`` with the fast codec.
    ///
    /// - Throws: ``PulseClientError/Code/malformedResponse`` when `data` is missing or does not have
    ///   the shape of `T`.
    package func decodeData<T: PulseJSONCodable>(as type: T.Type) throws(PulseClientError) -> T {
        do {
            if let data = try PulseEnvelope<T>(decodingJSON: payload).data {
                return data
            }
        } catch {
            throw PulseClientError(
                .malformedResponse, "the data of the response to \(bizType) has the wrong shape", underlying: error)
        }
        throw PulseClientError(.malformedResponse, "the response to \(bizType) carries no data")
    }
}
