/// A ``TransferBatch`` written to files by ``TransferBatch/export(into:)``: hand ``bodyPath`` and the
/// request (``TransferBatch/request``'s URL and headers, also in ``headersPath``) to the transfer.
public struct ExportedTransfer: Sendable {
    /// The claimed batch.
    public var batch: TransferBatch
    /// The transfer's folder (named by the lease's ``BatchLease/token``); remove it once the result is settled.
    public var directory: String
    /// The stored body, byte for byte.
    public var bodyPath: String
    /// The request headers, one `Name: value` line each.
    public var headersPath: String

    /// The lease to settle the result with.
    public var lease: BatchLease { batch.lease }
}
