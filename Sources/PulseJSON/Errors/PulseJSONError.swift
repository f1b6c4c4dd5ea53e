/// The error type of the PulseJSON module.
///
/// Descriptions never contain input bytes: only the kind of problem, a static message and, when
/// known, a byte offset.
public struct PulseJSONError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
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

    /// What went wrong.
    public var code: Code
    /// A short human-readable explanation (static text, never input bytes).
    public var message: String
    /// The underlying cause, if any.
    public var underlying: (any Error)?
    /// The byte offset in the input where the problem was found, when known.
    public var offset: Int?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil, offset: Int? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.offset = offset
    }

    public var description: String {
        var text = "PulseJSONError.\(code.rawValue): \(message)"
        if let offset { text += " (at byte \(offset))" }
        if let underlying { text += " [caused by: \(underlying)]" }
        return text
    }
}
