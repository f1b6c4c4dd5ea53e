import PulseProtocol

/// The events and crash reports of one resource, in record order, before they are split into
/// Pulse batches.
struct CollectedRecords {
    /// Room for a full event batch's count before the offsets grow.
    var events = EncodedItems(capacity: 8192, count: PulseLimits.eventBatchMaxEvents)
    var crashes = EncodedItems(capacity: 0)
    /// Per crash report, the event it becomes when the upstream refuses crash uploads.
    var crashFallbacks = EncodedItems(capacity: 0)
}
