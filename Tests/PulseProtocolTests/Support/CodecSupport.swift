import Foundation
import PulseKit
import PulseProtocol
import Testing

/// Encodes with Foundation's `JSONEncoder` (sorted keys so the text is deterministic).
func codableJSON<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// Decodes with Foundation's `JSONDecoder`.
func codableDecode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
    try JSONDecoder().decode(type, from: Data(json.utf8))
}

/// Encodes then decodes with Foundation's coders.
func codableRoundTrip<T: Codable>(_ value: T) throws -> T {
    try codableDecode(T.self, try codableJSON(value))
}

/// Decodes with the fast codec.
func fastDecode<T: PulseJSONCodable>(_ type: T.Type, _ json: String) throws -> T {
    try T(decodingJSON: Array(json.utf8))
}

/// The canonical JSON text of the fast codec.
func fastJSON<T: PulseJSONCodable>(_ value: T) -> String {
    String(decoding: value.encodeJSON(), as: UTF8.self)
}

/// Encodes then decodes with the fast codec.
func fastRoundTrip<T: PulseJSONCodable>(_ value: T) throws -> T {
    try T(decodingJSON: value.encodeJSON())
}

/// The bytes of a string literal.
func utf8(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// Decoding each case's JSON (with its code and message) using `decode` fails with that code and
/// message.
func expectRejections(
    _ cases: [(String, PulseProtocolError.Code, String)], _ decode: ([UInt8]) throws -> Void
) {
    for (json, code, message) in cases {
        do {
            try decode(utf8(json))
            Issue.record("accepted \(json)")
        } catch {
            let error = error as? PulseProtocolError
            #expect(error?.code == code, "\(json)")
            #expect(error?.message == message, "\(json)")
        }
    }
}
