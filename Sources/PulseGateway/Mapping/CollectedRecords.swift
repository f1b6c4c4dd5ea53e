/// The events and crash reports of one resource, in record order, before they are split into
/// Pulse batches.
struct CollectedRecords {
    var events: [[UInt8]] = []
    var crashes: [[UInt8]] = []
    /// Per crash report, the event it becomes when the upstream refuses crash uploads.
    var crashFallbacks: [[UInt8]] = []
}
