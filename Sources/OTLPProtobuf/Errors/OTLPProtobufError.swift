/// The error type of the OTLPProtobuf module.
///
/// Every malformed input is reported with one of these, never a crash. The ``message`` names the
/// field path where the problem was found (for example
/// `resourceLogs[0].scopeLogs[1].logRecords[3].body: truncated length-delimited field`) and never
/// contains payload bytes: only field names, indexes and static text.
public struct OTLPProtobufError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The input ends inside a tag, a varint, a fixed-width value or a length-delimited field,
        /// a length points past the end of its enclosing message, or a packed field's length is not
        /// a whole number of elements.
        case truncated
        /// A varint is longer than 10 bytes or its value does not fit in 64 bits.
        case varintOverflow
        /// A tag carries wire type 6 or 7, which do not exist.
        case invalidWireType
        /// A tag carries wire type 3 or 4 (groups): OTLP never uses groups and they are rejected.
        case groupNotSupported
        /// A tag carries field number 0 or a number beyond 2^29 - 1.
        case invalidFieldNumber
        /// A `string` field is not valid UTF-8 (proto3 requires it).
        case invalidUTF8
        /// Messages are nested deeper than ``OTLPProtobufLimits/maxDepth``.
        case nestingTooDeep
        /// The JSON transcoding grew beyond ``OTLPProtobufLimits/maxOutputBytes``.
        case outputTooLarge
        /// The input is 4 GiB or larger (offsets are kept in 32 bits).
        case inputTooLarge
    }

    /// What went wrong.
    public var code: Code
    /// A short explanation that starts with the field path, e.g.
    /// `resourceSpans[0].scopeSpans[0].spans[2]: varint longer than 10 bytes`.
    public var message: String
    /// The field path where the problem was found (`resourceLogs[0].scopeLogs[1]`), or an empty
    /// string for the request message itself. Unknown fields appear as `#<number>`.
    public var path: String
    /// The byte offset in the input where the offending field or value starts, when known.
    public var offset: Int?
    /// The underlying cause, if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, path: String = "", offset: Int? = nil, underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.offset = offset
        self.underlying = underlying
    }

    public var description: String {
        var text = "OTLPProtobufError.\(code.rawValue): \(message)"
        if let offset { text += " (at byte \(offset))" }
        if let underlying { text += " [caused by: \(underlying)]" }
        return text
    }
}
