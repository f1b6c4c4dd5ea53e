import MsgTrans
import MsgTransRuntime
import PulseJSON
import PulseProtocol

/// Builds response payloads: the Pulse envelope `{"code":…,"msg":…,"data":…}` in canonical form.
enum Envelope {
    /// `{"code":0,"msg":null,"data":true}`, the durable-acceptance acknowledgement.
    static let acceptedBytes: [UInt8] = Array(#"{"code":0,"msg":null,"data":true}"#.utf8)

    /// The durable-acceptance acknowledgement as a reply.
    static let accepted = MsgTransReply(acceptedBytes)

    /// The 429 reply the transport sends when a peer exceeds its in-flight bound or the server is
    /// draining.
    static let overloaded = failure(.tooManyRequests, "in-flight capacity exhausted, retry with backoff")

    /// A failure envelope with `data` null.
    static func failure(_ code: PulseResponseCode, _ message: String) -> MsgTransReply {
        var writer = JSONWriter(capacity: 64 + message.utf8.count)
        writer.beginObject()
        writer.field("code", code.rawValue)
        writer.field("msg", message)
        writer.key("data")
        writer.null()
        writer.endObject()
        return MsgTransReply(writer.bytes)
    }

    /// A success envelope whose `data` is the already encoded JSON value `data`.
    static func success(data: [UInt8], compression: Compression = .zstd) -> MsgTransReply {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count + 32)
        bytes.append(contentsOf: #"{"code":0,"msg":null,"data":"#.utf8)
        bytes.append(contentsOf: data)
        bytes.append(UInt8(ascii: "}"))
        return MsgTransReply(bytes, compression: compression)
    }

    /// A success envelope for an update check: `data` is the encoded `UpdateCheckResult` object, and
    /// its members are repeated at the root after `data` (the beta-migration compatibility copy).
    static func successWithRootCopy(data: [UInt8]) -> MsgTransReply {
        precondition(data.first == UInt8(ascii: "{") && data.last == UInt8(ascii: "}"))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count * 2 + 32)
        bytes.append(contentsOf: #"{"code":0,"msg":null,"data":"#.utf8)
        bytes.append(contentsOf: data)
        if data.count > 2 {
            bytes.append(UInt8(ascii: ","))
            bytes.append(contentsOf: data[1..<(data.count - 1)])
        }
        bytes.append(UInt8(ascii: "}"))
        return MsgTransReply(bytes)
    }
}
