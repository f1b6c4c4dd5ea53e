public import PulseJSON

/// The application envelope every Pulse response payload carries:
/// `{"code":0,"msg":null,"data":<typed result or null>}`.
///
/// `code` is kept as the raw integer so an unknown code decodes without loss; ``knownCode`` maps it
/// onto ``PulseResponseCode``. Decoding treats a missing or `null` `code` as 0 and ignores unknown
/// keys. Encoding always writes all three fields, with explicit `null`s, in the order `code`, `msg`,
/// `data`.
///
/// When `code` is non-zero, `data` carries no contract meaning: the decoder accepts any value there
/// and yields `nil` if it does not match `Payload`.
public struct PulseEnvelope<Payload: Sendable>: Sendable {
    /// The numeric result code; 0 means success.
    public var code: Int
    /// A human-readable explanation, normally set only when `code` is non-zero.
    public var msg: String?
    /// The typed result, or `nil` (`null` on the wire).
    public var data: Payload?

    /// Creates an envelope from its three fields.
    public init(code: Int, msg: String?, data: Payload?) {
        self.code = code
        self.msg = msg
        self.data = data
    }

    /// A success envelope: `code` 0, `msg` null.
    public static func ok(_ data: Payload?) -> PulseEnvelope {
        PulseEnvelope(code: PulseResponseCode.ok.rawValue, msg: nil, data: data)
    }

    /// A failure envelope with no data. `code` must not be ``PulseResponseCode/ok``.
    public static func failure(_ code: PulseResponseCode, _ msg: String?) -> PulseEnvelope {
        precondition(code != .ok, "a failure envelope needs a non-zero code")
        return PulseEnvelope(code: code.rawValue, msg: msg, data: nil)
    }

    /// Whether `code` is 0.
    public var isSuccess: Bool { code == PulseResponseCode.ok.rawValue }

    /// The code as a known ``PulseResponseCode``, or `nil` for a code this build does not know.
    public var knownCode: PulseResponseCode? { PulseResponseCode(rawValue: code) }

    /// What the request's sender does next, also defined for unknown codes
    /// (see ``PulseSenderAction/forCode(_:)``).
    public var senderAction: PulseSenderAction { PulseSenderAction.forCode(code) }
}

extension PulseEnvelope where Payload == Bool {
    /// The upload acknowledgement `{"code":0,"msg":null,"data":true}`.
    public static var accepted: PulseEnvelope<Bool> { .ok(true) }

    /// Whether this response confirms durable acceptance of an upload: `code == 0` and `data == true`.
    /// Anything else (including success with `data` null or false) must leave the outbox row in place.
    public var confirmsAcceptance: Bool { isSuccess && data == true }
}

extension PulseEnvelope: Equatable where Payload: Equatable {}
extension PulseEnvelope: Hashable where Payload: Hashable {}

extension PulseEnvelope: PulseJSONCodable where Payload: PulseJSONCodable {
    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        let o = try JSONObjectReader(node)
        code = try o.nullable("code") ?? PulseResponseCode.ok.rawValue
        msg = try o.nullable("msg")
        if let dataNode = o.optional("data") {
            if code == PulseResponseCode.ok.rawValue {
                do {
                    data = try Payload(jsonNode: dataNode)
                } catch {
                    throw error.at("data")
                }
            } else {
                data = try? Payload(jsonNode: dataNode)
            }
        } else {
            data = nil
        }
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writeFields(to: &writer)
        writer.endObject()
    }

    /// Writes `code`, `msg` and `data` without braces.
    func writeFields(to writer: inout JSONWriter) {
        writer.field("code", code)
        writer.field("msg", msg)
        writer.key("data")
        if let data {
            data.writeJSON(to: &writer)
        } else {
            writer.null()
        }
    }
}
