/// A record turned into its OTLP JSON item, ready to be queued.
///
/// `fragment` is one complete JSON object: a `logRecord`, a `span`, or a `metric` holding one data point.
/// Sealing places fragments into the batch body without decoding them again.
struct EncodedRecord: Sendable {
    var signal: Signal
    var recordClass: RecordClass
    /// The record id reported in the receipt and stored for audit.
    var recordId: String
    var crashId: String?
    /// When the record was created (the uploader's clock), for age and sealing deadlines.
    var createdMilliseconds: Int64
    var fragment: [UInt8]
}
