import PulseKit

/// A statement parameter, sent out of line in PostgreSQL's binary format.
///
/// Integers are always `int8` (columns of the schemas using this module are `bigint`), strings
/// `text`, bytes `bytea`; arrays are one-dimensional and may hold `NULL` elements.
package enum PostgresValue: Sendable, Equatable {
    /// SQL `NULL` (its type is inferred by the server).
    case null
    /// An `int8`.
    case int(Int64)
    /// A `text`.
    case text(String)
    /// A `bytea`.
    case bytes([UInt8])
    /// A `boolean`.
    case bool(Bool)
    /// An `int8[]`.
    case intArray([Int64])
    /// A `text[]`.
    case textArray([String])
    /// A `bytea[]` (an element may be `nil`: SQL `NULL`).
    case bytesArray([[UInt8]?])

    /// The type OID sent with the value (0: let the server infer it).
    var typeOID: UInt32 {
        switch self {
        case .null: 0
        case .int: 20
        case .text: 25
        case .bytes: 17
        case .bool: 16
        case .intArray: 1016
        case .textArray: 1009
        case .bytesArray: 1001
        }
    }

    /// The binary encoding, `nil` for `NULL`.
    var encoded: [UInt8]? {
        switch self {
        case .null: return nil
        case .int(let value): return [UInt8](bigEndian: value)
        case .text(let value): return Array(value.utf8)
        case .bytes(let value): return value
        case .bool(let value): return [value ? 1 : 0]
        case .intArray(let values): return Self.array(elementOID: 20, values.map { [UInt8](bigEndian: $0) })
        case .textArray(let values): return Self.array(elementOID: 25, values.map { Array($0.utf8) })
        case .bytesArray(let values): return Self.array(elementOID: 17, values)
        }
    }

    /// The binary array format: dimensions, has-null flag, element type, then per dimension its
    /// length and lower bound (1), then each element as a length (-1 for `NULL`) and its bytes.
    static func array(elementOID: Int32, _ elements: [[UInt8]?]) -> [UInt8] {
        var out: [UInt8] = []
        let hasNull = elements.contains { $0 == nil }
        if elements.isEmpty {
            for word: Int32 in [0, 0, elementOID] { out.appendBigEndian(word) }
            return out
        }
        for word: Int32 in [1, hasNull ? 1 : 0, elementOID, Int32(elements.count), 1] { out.appendBigEndian(word) }
        for element in elements {
            if let element {
                out.appendBigEndian(Int32(element.count))
                out += element
            } else {
                out.appendBigEndian(Int32(-1))
            }
        }
        return out
    }
}

/// One SQL statement (a single command with `$1`, `$2`, … placeholders) and its parameters.
package struct PostgresStatement: Sendable {
    /// The SQL text.
    package var sql: String
    /// The parameters, in placeholder order.
    package var parameters: [PostgresValue]

    /// Creates a statement.
    package init(_ sql: String, _ parameters: [PostgresValue] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}
