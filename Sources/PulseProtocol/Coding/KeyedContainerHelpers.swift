/// Coding keys built from strings at run time, used where a type writes keys that are not known
/// statically (sampling rates per event kind, the update-check root copy).
struct DynamicCodingKey: CodingKey, Hashable {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ stringValue: String) {
        self.stringValue = stringValue
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        nil
    }
}

extension KeyedDecodingContainer {
    /// Decodes an optional field, treating a missing key and `null` alike as `defaultValue`.
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key, default defaultValue: T) throws -> T {
        try decodeIfPresent(type, forKey: key) ?? defaultValue
    }
}
