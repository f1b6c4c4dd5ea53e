import Foundation

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
