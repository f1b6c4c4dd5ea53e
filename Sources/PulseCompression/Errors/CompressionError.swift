package import PulseKit

/// The single error type of the PulseCompression module: the shared ``PulseError`` shape with
/// ``CompressionErrorCode``.
///
/// Descriptions contain sizes and library error names only, never payload bytes. Callers map the
/// ``PulseError/code`` to their own module's error (msgtrans payload errors, HTTP 400/413, uploader errors).
package typealias CompressionError = PulseError<CompressionErrorCode>

/// What went wrong in the PulseCompression module.
package enum CompressionErrorCode: String, PulseErrorCode, CaseIterable {
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
