import MsgTrans
import MsgTransRuntime
import PulseJSON
import PulseProtocol

/// Builds response payloads: the Pulse envelope `{"code":…,"msg":…,"data":…}` in canonical form,
/// with PulseProtocol's codecs.
enum Envelope {
    /// `{"code":0,"msg":null,"data":true}`, the durable-acceptance acknowledgement.
    static let accepted = MsgTransReply(PulseEnvelope<Bool>.accepted.encodeJSON())

    /// The 429 reply the transport sends when a peer exceeds its in-flight bound or the server is
    /// draining.
    static let overloaded = failure(.tooManyRequests, "in-flight capacity exhausted, retry with backoff")

    /// A failure envelope with `data` null.
    static func failure(_ code: PulseResponseCode, _ message: String) -> MsgTransReply {
        MsgTransReply(PulseEnvelope<Bool>.failure(code, message).encodeJSON())
    }

    /// A success envelope carrying `data`.
    static func success<Data: PulseJSONCodable>(_ data: Data, compression: Compression = .zstd) -> MsgTransReply {
        MsgTransReply(PulseEnvelope<Data>.ok(data).encodeJSON(), compression: compression)
    }

    /// A success envelope for an update check, with the result repeated at the root (the
    /// beta-migration compatibility copy).
    static func success(_ result: UpdateCheckResult) -> MsgTransReply {
        MsgTransReply(UpdateCheckResponse(envelope: .ok(result)).encodeJSON())
    }
}
