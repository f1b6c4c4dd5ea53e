import Foundation
import PulseJSON
import PulseProtocol

/// Decoding of request payloads and encoding of result data, in one place.
///
/// Batches use PulseProtocol's fast codecs (simdjson via PulseJSON); the small control messages
/// use them too where they exist.
enum PayloadCoding {
    static func decodeConnect(_ payload: [UInt8]) throws -> ConnectRequest {
        try JSONDecoder().decode(ConnectRequest.self, from: Data(payload))
    }

    static func decodeHeartbeat(_ payload: [UInt8]) throws -> HeartbeatRequest {
        try JSONDecoder().decode(HeartbeatRequest.self, from: Data(payload))
    }

    static func decodeConfigPull(_ payload: [UInt8]) throws -> ConfigPullRequest {
        try JSONDecoder().decode(ConfigPullRequest.self, from: Data(payload))
    }

    static func decodeUpdateCheck(_ payload: [UInt8]) throws -> UpdateCheckRequest {
        try JSONDecoder().decode(UpdateCheckRequest.self, from: Data(payload))
    }

    /// The route of a control RPC request (validated syntax).
    static func decodeControlRoute(_ payload: [UInt8]) throws -> String {
        let document = try JSONParser().parse(payload)
        guard let route = document.root["route"]?.string else {
            throw PulseProtocolError(code: .missingField, message: "$.route is missing or not a string")
        }
        return try ControlRoute(validating: route).name
    }

    static func decodeEventBatch(_ payload: [UInt8], connectionId: String) throws -> BatchRecord<EventRecord> {
        fatalError("pending PulseProtocol fast codecs")
    }

    static func decodeCrashBatch(_ payload: [UInt8], connectionId: String) throws -> BatchRecord<CrashRecord> {
        fatalError("pending PulseProtocol fast codecs")
    }

    static func encode<Value: Encodable>(_ value: Value) -> [UInt8] {
        (try? Array(JSONEncoder().encode(value))) ?? Array("null".utf8)
    }

    /// A short, payload-free description of a decoding error for a 400 message.
    static func summary(of error: any Error) -> String {
        if let error = error as? PulseProtocolError {
            return error.message
        }
        if let error = error as? PulseJSONError {
            return "not valid JSON (\(error.code.rawValue))"
        }
        if error is DecodingError {
            return "a field is missing or has the wrong type"
        }
        return "cannot be decoded"
    }

    /// Quotes a short client-supplied token for a message: at most 64 characters, control
    /// characters dropped.
    static func quoted(_ token: String) -> String {
        let cleaned = token.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(64)
        var text = "\""
        text.unicodeScalars.append(contentsOf: cleaned)
        return text + (token.unicodeScalars.count > 64 ? "…\"" : "\"")
    }
}
