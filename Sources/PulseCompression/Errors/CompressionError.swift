/// The single error type of the PulseCompression module.
///
/// Descriptions contain sizes and library error names only, never payload bytes. Callers map the
/// ``code`` to their own module's error (msgtrans payload errors, HTTP 400/413, uploader errors).
public struct CompressionError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable, Hashable, CaseIterable {
        /// The compressor failed (or could not allocate a context).
        case compressionFailed
        /// The input is not a valid stream of the codec (or a context could not be allocated).
        case decompressionFailed
        /// Decompression would produce more than the allowed number of bytes.
        case decompressedTooLarge
        /// Bytes follow the end of the compressed stream.
        case trailingBytes
        /// The compressed stream ends before its end marker.
        case truncatedStream
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation (never contains payload bytes).
    public var message: String
    /// The underlying cause, if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        var text = "CompressionError.\(code): \(message)"
        if let underlying { text += " (underlying: \(underlying))" }
        return text
    }
}
