public import PulseKit

/// The single error type of `PulseUploader`: the shared ``PulseError`` shape with
/// ``UploaderErrorCode``.
///
/// Messages name what failed and where (a field, a line number, an HTTP status); they never contain record
/// payloads, request bodies or credentials.
public typealias UploaderError = PulseError<UploaderErrorCode>

/// The broad category of a `PulseUploader` failure.
public enum UploaderErrorCode: String, PulseErrorCode, CaseIterable {
    /// A record or an argument is not valid (a missing field, a bad id, a bad timestamp).
    case invalidRecord
    /// Collection is stopped: consent was withdrawn or the policy's kill switch is on.
    case collectionStopped
    /// The record could not be queued because the queue is at its cap and only higher-priority data is left.
    case queueFull
    /// The record (or attachment) is larger than the largest batch the policy allows.
    case oversized
    /// The on-disk queue failed (SQLite).
    case storage
    /// An attachment file could not be read.
    case fileAccess
    /// The HTTP exchange failed before a response arrived (connect, TLS, timeout, reset).
    case network
    /// Compression of a sealed batch failed.
    case compression
    /// The configuration is not valid (endpoint URL, data directory, policy values).
    case configuration
    /// A background hand-over could not be started.
    case backgroundTransfer
    /// The uploader was closed.
    case closed
}

extension UploaderError {
    /// `error` itself if it is an ``UploaderError``, else a ``UploaderErrorCode/storage`` error wrapping it.
    static func storage(
        _ error: any Error, _ context: String, file: String = #fileID, line: UInt = #line
    ) -> UploaderError {
        if let error = error as? UploaderError {
            return error
        }
        return UploaderError(.storage, context, underlying: error, file: file, line: line)
    }
}
