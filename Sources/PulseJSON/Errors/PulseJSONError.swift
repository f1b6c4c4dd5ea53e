public import PulseKit

/// The error type of the PulseJSON module: the shared ``PulseError`` shape with
/// ``PulseJSONErrorCode`` and a ``PulseJSONErrorDetail`` (byte offset).
///
/// Descriptions never contain input bytes: only the kind of problem, a static message and, when
/// known, a byte offset.
public typealias PulseJSONError = PulseError<PulseJSONErrorCode>

/// What went wrong in the PulseJSON module.
public enum PulseJSONErrorCode: String, PulseErrorCode, CaseIterable {
    /// The facts an error records beside its code and message.
    public typealias Detail = PulseJSONErrorDetail

    /// The input is not JSON: bad token, bad escape or lone surrogate in `\u` escapes,
    /// unescaped control character, unclosed string or container, trailing content, or no
    /// value at all (empty or whitespace-only input).
    case invalidJSON
    /// The input is not valid UTF-8.
    case invalidUTF8
    /// Arrays and objects are nested deeper than the parser's `maxDepth`.
    case depthExceeded
    /// The input is longer than the parser's `maxBytes`.
    case tooLarge
    /// A number is malformed (`01`, `1.`) or out of range: integers beyond the `Int64`/`UInt64`
    /// range and numbers whose magnitude overflows `Double` are rejected, never rounded.
    case invalidNumber
    /// Memory could not be allocated.
    case outOfMemory
    /// An unexpected failure inside the parser.
    case internalError
}

/// Where a ``PulseJSONError`` was found.
public struct PulseJSONErrorDetail: PulseErrorDetail, Hashable {
    /// The byte offset in the input where the problem was found, when known.
    public var offset: Int?

    /// A detail without an offset.
    public init() { self.init(offset: nil) }

    /// A detail with the byte offset where the problem was found.
    public init(offset: Int?) { self.offset = offset }

    /// ` (at byte N)` when the offset is known.
    public var descriptionSuffix: String { offset.map { " (at byte \($0))" } ?? "" }
}

extension PulseJSONError {
    /// The byte offset where the problem was found; see ``PulseJSONErrorDetail/offset``.
    public var offset: Int? { detail.offset }
}
