import PulseJSON

/// Bridges a free-form ``JSONValue`` (event attributes, RPC arguments) into `Codable`.
///
/// Foundation's `JSONDecoder` does not report object member order and reads `1.0` as an integer, so a
/// value decoded through `Codable` may differ in member order and number kind from the fast decoder's;
/// the fast codecs (``PulseJSONCodable``) preserve both.
struct CodableJSONValue: Codable {
    var value: JSONValue

    init(_ value: JSONValue) {
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        // Most free-form values are strings, so they are tried first; every failed attempt costs a
        // thrown DecodingError.
        if let single = try? decoder.singleValueContainer() {
            if single.decodeNil() {
                value = .null
                return
            }
            if let string = try? single.decode(String.self) {
                value = .string(string)
                return
            }
            if let bool = try? single.decode(Bool.self) {
                value = .bool(bool)
                return
            }
            if let int = try? single.decode(Int64.self) {
                value = .int(int)
                return
            }
            if let uint = try? single.decode(UInt64.self) {
                value = .uint(uint)
                return
            }
            if let double = try? single.decode(Double.self) {
                value = .double(double)
                return
            }
        }
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd {
                elements.append(try array.decode(CodableJSONValue.self).value)
            }
            value = .array(elements)
            return
        }
        let object = try decoder.container(keyedBy: DynamicCodingKey.self)
        var members: [JSONMember] = []
        for key in object.allKeys {
            members.append(
                JSONMember(key: key.stringValue, value: try object.decode(CodableJSONValue.self, forKey: key).value))
        }
        value = .object(members)
    }

    func encode(to encoder: any Encoder) throws {
        switch value {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let bool):
            var single = encoder.singleValueContainer()
            try single.encode(bool)
        case .int(let int):
            var single = encoder.singleValueContainer()
            try single.encode(int)
        case .uint(let uint):
            var single = encoder.singleValueContainer()
            try single.encode(uint)
        case .double(let double):
            var single = encoder.singleValueContainer()
            try single.encode(double)
        case .string(let string):
            var single = encoder.singleValueContainer()
            try single.encode(string)
        case .array(let elements):
            var array = encoder.unkeyedContainer()
            for element in elements {
                try array.encode(CodableJSONValue(element))
            }
        case .object(let members):
            try Self.encode(members: members, to: encoder)
        }
    }

    /// Encodes object members; with duplicate keys the first occurrence wins, as in the fast decoder.
    static func encode(members: [JSONMember], to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: DynamicCodingKey.self)
        var seen = Set<String>()
        for member in members where seen.insert(member.key).inserted {
            try object.encode(CodableJSONValue(member.value), forKey: DynamicCodingKey(member.key))
        }
    }
}

extension KeyedDecodingContainer {
    /// Decodes an object of free-form members; absent or `null` gives `[]`.
    func decodeMembers(forKey key: Key) throws -> [JSONMember] {
        guard let wrapped = try decodeIfPresent(CodableJSONValue.self, forKey: key) else {
            return []
        }
        switch wrapped.value {
        case .object(let members): return members
        case .null: return []
        default:
            throw PulseProtocolError(code: .typeMismatch, message: "\(key.stringValue): expected an object")
        }
    }
}

extension KeyedEncodingContainer {
    /// Encodes free-form members as an object.
    mutating func encodeMembers(_ members: [JSONMember], forKey key: Key) throws {
        try encode(CodableJSONValue(.object(members)), forKey: key)
    }
}
