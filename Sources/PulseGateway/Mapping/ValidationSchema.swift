import OTLPProtobuf
import PulseJSON

extension OTLPValidator {
    /// The JSON rules of every OTLP message, indexed by ``MessageKind`` raw value.
    static let schemas: [Schema] = MessageKind.allCases.map { Schema($0.schema) }

    /// The fields of one OTLP message.
    final class Schema: Sendable {
        /// The JSON names, by field index.
        private let names: KeyTable
        let forms: [Form]
        let displays: [String]

        /// The JSON fields of `message` (its development fields left out).
        init(_ message: MessageSchema) {
            let fields = message.fields.filter { !$0.isDevelopment }
            precondition(fields.count <= MessageFields.capacity, "the walk keeps the fields of a message inline")
            displays = fields.map { $0.name.description }
            names = KeyTable(displays)
            forms = fields.map(Form.init)
        }

        /// The bits of the fields named `names` (JSON names), for ``OTLPValidator/check(members:_:deferring:)``.
        func mask(_ names: String...) -> UInt64 {
            names.reduce(0) { mask, name in mask | 1 << UInt64(field(named: name)) }
        }

        /// The index of the field named `name` (a JSON name the message has).
        func field(named name: String) -> Int {
            guard let index = displays.firstIndex(of: name) else { preconditionFailure("no field \(name)") }
            return index
        }

        /// The index of the field named by `key`, or `nil` for an unknown member.
        @inline(__always)
        func field(_ key: JSONCursor) -> Int? {
            names.index(key)
        }

        /// ``field(_:)-(JSONCursor)`` of a node.
        func field(_ key: JSONNode) -> Int? {
            key.withCursor { field($0) }
        }
    }
}
