/// What the uploader hands over to a background transfer.
public struct BackgroundHandOver: Sendable, Equatable {
    /// Why the hand-over happens.
    public enum Reason: String, Sendable, CaseIterable {
        /// The app moved to the background: everything left goes to the background path.
        case movedToBackground
        /// A crash report or an attachment is due: these always take the background path.
        case urgentUpload
        /// A batch at least ``UploadPolicy/largeUploadBytes`` large is due.
        case largeUpload
    }

    /// Why the hand-over happens.
    public var reason: Reason
    /// The queue's data directory (the background job opens the same queue).
    public var dataDirectory: String
    /// Sealed batches waiting at hand-over time.
    public var pendingBatches: Int
    /// The earliest time (epoch ms) a waiting batch may be sent, or `nil` if none is waiting.
    public var earliestAttemptMilliseconds: Int64?
    /// Batches claimed and handed to the ``OutOfProcessTransfer`` (0 when none is configured).
    public var transferredBatches: Int

    /// Creates a hand-over.
    public init(
        reason: Reason, dataDirectory: String, pendingBatches: Int, earliestAttemptMilliseconds: Int64?,
        transferredBatches: Int = 0
    ) {
        self.reason = reason
        self.dataDirectory = dataDirectory
        self.pendingBatches = pendingBatches
        self.earliestAttemptMilliseconds = earliestAttemptMilliseconds
        self.transferredBatches = transferredBatches
    }
}

/// The platform's way to keep uploading when the app is not in the foreground.
///
/// The uploader calls ``handOver(_:)`` when the app moves to the background and whenever a crash report,
/// an attachment or a large batch is due. The implementation arranges for the queue to be drained later,
/// outside the app's foreground session:
///
/// - Linux: ``DetachedDrainTransfer`` starts a detached `pulsegate upload drain` process (and the
///   `pulsegate-upload-drain.timer` systemd unit runs the same command periodically). It runs the uploader's
///   own code, so requests carry `Apsio-Sent-At`.
/// - Apple platforms: a background `URLSession` sends batches the uploader claimed and exported, and the
///   app settles each result — an ``OutOfProcessTransfer`` (``Uploader/claimForTransfer(route:maximum:leaseMilliseconds:)``,
///   ``TransferBatch/export(into:)``, ``Uploader/settle(_:_:)``); the OS sends the request, so
///   `Apsio-Sent-At` is omitted. ``CurlProcessTransfer`` is the Linux counterpart.
/// - Android: an implementation enqueues a unique WorkManager job with network constraints; the worker runs
///   the uploader's drain and therefore sets `Apsio-Sent-At`.
///
/// `docs/uploader.md` describes the three in detail.
public protocol BackgroundTransfer: Sendable {
    /// Arranges for the queue to be drained in the background. Returns once the hand-over is arranged (not
    /// once the uploads finished).
    ///
    /// - Throws: ``UploaderError`` with ``UploaderError/Code/backgroundTransfer`` if nothing could be arranged;
    ///   the batches stay queued and the foreground tries again later.
    func handOver(_ handOver: BackgroundHandOver) async throws(UploaderError)
}
