import Glibc
import OTLPProtobuf
import PulseJSON

extension OTLPValidator {
    /// The JSON rules of every OTLP message, indexed by ``MessageKind`` raw value.
    static let schemas: [Schema] = MessageKind.allCases.map { Schema($0.schema) }

    /// The fields of one OTLP message.
    final class Schema: Sendable {
        /// The JSON names, one after the other (``nameEnds`` delimits them).
        private let names: [UInt8]
        private let nameEnds: [Int]
        let forms: [Form]
        let displays: [String]

        /// The JSON fields of `message` (its development fields left out).
        init(_ message: MessageSchema) {
            let fields = message.fields.filter { !$0.isDevelopment }
            precondition(fields.count <= 64, "duplicate detection keeps one bit per field")
            var names: [UInt8] = []
            var nameEnds: [Int] = []
            for field in fields {
                field.name.withUTF8Buffer { names.append(contentsOf: $0) }
                nameEnds.append(names.count)
            }
            self.names = names
            self.nameEnds = nameEnds
            forms = fields.map(Form.init)
            displays = fields.map { $0.name.description }
        }

        /// The bits of the fields named `names` (JSON names), for ``OTLPValidator/check(members:_:deferring:)``.
        func mask(_ names: String...) -> UInt64 {
            names.reduce(0) { mask, name in
                guard let index = displays.firstIndex(of: name) else {
                    preconditionFailure("no field \(name)")
                }
                return mask | 1 << UInt64(index)
            }
        }

        /// The index of the field named by `key`, or `nil` for an unknown member.
        func field(_ key: JSONNode) -> Int? {
            key.withUTF8 { (bytes) -> Int? in
                names.withUnsafeBufferPointer { names in
                    nameEnds.withUnsafeBufferPointer { ends in
                        var start = 0
                        for index in 0..<ends.count {
                            let end = ends[index]
                            if end - start == bytes.count
                                && (bytes.isEmpty
                                    || memcmp(names.baseAddress! + start, bytes.baseAddress!, bytes.count) == 0)
                            {
                                return index
                            }
                            start = end
                        }
                        return nil
                    }
                }
            } ?? nil
        }
    }
}
