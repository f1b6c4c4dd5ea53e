/// A transfer that something outside the uploader performs — the operating system, or an independent
/// program — from batches the uploader claimed and exported: a background `URLSession` on Apple platforms,
/// ``CurlProcessTransfer`` on Linux.
///
/// When one is configured (``UploaderConfiguration/outOfProcessTransfer``), crash reports, attachments and
/// large batches take this path whenever they are due, and ``Uploader/enterBackground()`` hands every due
/// batch to it: the uploader claims them with a lease, exports each into ``exportDirectory`` and calls
/// ``start(_:)``. The results are settled through ``Uploader/settle(_:_:)`` — by ``settleFinished(on:)``,
/// which the foreground loop and ``Uploader/settleFinishedTransfers()`` call, or by the app's own callback.
public protocol OutOfProcessTransfer: Sendable {
    /// The folder batches are exported into (one sub-folder per lease).
    var exportDirectory: String { get }

    /// Starts sending the exported batches and returns without waiting for them. The transfer must
    /// outlive this process.
    ///
    /// - Throws: ``UploaderError/Code/backgroundTransfer`` when nothing could be started: the uploader
    ///   releases the leases of the batches (they stay queued, unchanged).
    func start(_ batches: [ExportedTransfer]) async throws(UploaderError)

    /// Settles every transfer that finished since the last call (this process's or an earlier one's)
    /// through ``Uploader/settle(_:_:)``, and cleans up after transfers whose result will never come.
    func settleFinished(on uploader: Uploader) async throws(UploaderError) -> [TransferSettlement]
}
