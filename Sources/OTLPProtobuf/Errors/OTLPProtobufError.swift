package import PulseKit

/// The error type of the OTLPProtobuf module: the shared ``PulseError`` shape with
/// ``OTLPProtobufErrorCode`` and an ``OTLPProtobufErrorDetail`` (field path and byte offset).
///
/// Every malformed input is reported with one of these, never a crash. The message names the
/// field path where the problem was found (for example
/// `resourceLogs[0].scopeLogs[1].logRecords[3].body: truncated length-delimited field`) and never
/// contains payload bytes: only field names, indexes and static text.
package typealias OTLPProtobufError = PulseError<OTLPProtobufErrorCode>

/// What went wrong in the OTLPProtobuf module.
package enum OTLPProtobufErrorCode: String, PulseErrorCode, CaseIterable {
    /// The facts an error records beside its code and message.
    package typealias Detail = OTLPProtobufErrorDetail

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

/// Where an ``OTLPProtobufError`` was found.
package struct OTLPProtobufErrorDetail: PulseErrorDetail, Hashable {
    /// The field path where the problem was found (`resourceLogs[0].scopeLogs[1]`), or an empty
    /// string for the request message itself. Unknown fields appear as `#<number>`.
    package var path: String
    /// The byte offset in the input where the offending field or value starts, when known.
    package var offset: Int?

    /// A detail with no path and no offset.
    package init() { self.init(path: "", offset: nil) }

    /// A detail with a field path and, when known, a byte offset.
    package init(path: String, offset: Int?) {
        self.path = path
        self.offset = offset
    }

    /// ` (at byte N)` when the offset is known.
    package var descriptionSuffix: String { offset.map { " (at byte \($0))" } ?? "" }
}

extension OTLPProtobufError {
    /// The field path where the problem was found; see ``OTLPProtobufErrorDetail/path``.
    package var path: String { detail.path }
    /// The byte offset where the offending field or value starts; see ``OTLPProtobufErrorDetail/offset``.
    package var offset: Int? { detail.offset }
}
