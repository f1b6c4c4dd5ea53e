package import PulseKit

/// The single error type of the `PulseIngest` module: the shared ``PulseError`` shape with
/// ``IngestErrorCode``.
///
/// Descriptions name codes, paths and identifiers of configuration entries, never payload bytes
/// or secrets.
package typealias IngestError = PulseError<IngestErrorCode>

/// What went wrong in the PulseIngest module.
package enum IngestErrorCode: String, PulseErrorCode, CaseIterable {
    /// The configuration (flags, environment or the config file) is invalid.
    case invalidConfiguration
    /// The config file could not be read.
    case configurationUnreadable
    /// The durable store could not be opened, migrated or written.
    case storageFailed
    /// The msgtrans listener or the admin HTTP endpoint could not be started.
    case startFailed
    /// The server is shutting down or has shut down.
    case shutDown
}
