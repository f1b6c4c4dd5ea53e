import Foundation
import OTLPProtobuf
public import PulseKit

/// A sealed batch claimed for an out-of-process transfer (``Uploader/claimForTransfer(route:maximum:leaseMilliseconds:)``):
/// the exact request to send and the lease that keeps every other sender off the batch until
/// ``leaseExpiresAtMilliseconds``.
///
/// The request carries `Apsio-Batch-Id`, `Apsio-App-Id`, `Content-Type`, `Content-Encoding` and
/// `Apsio-Batch-Sequence`, but not `Apsio-Sent-At`: the operating system sends it whenever it chooses, so no
/// truthful send time exists (Apsio 4.4 / 5.1) and the gateway uses its receive time.
public struct TransferBatch: Sendable {
    /// The claim: settle the transfer's result with it (``Uploader/settle(_:_:)``).
    public var lease: BatchLease
    /// The batch's signal (its path is the request's path).
    package var signal: Signal
    /// The batch's class (crash reports are urgent: an app may ask the OS not to defer them).
    public var recordClass: RecordClass
    /// The request: `POST`, the full URL, the headers in order and the stored (compressed) body, byte for
    /// byte as sealed.
    public var request: UploadRequest
    /// When the lease lapses (epoch ms, the uploader's clock): afterwards the batch may be claimed again,
    /// with the same id and bytes, and a result for this lease no longer decides its fate unless it is a 2xx.
    public var leaseExpiresAtMilliseconds: Int64
    /// The lease's length in milliseconds (a transfer should give up before it lapses).
    public var leaseMilliseconds: Int64

    /// The HTTP/1.1 request line, e.g. `POST /v1/logs HTTP/1.1`.
    public var requestLine: String {
        "\(request.method) \(signal.path) HTTP/1.1"
    }

    /// The file names ``export(into:)`` writes inside the transfer's folder.
    public enum FileName {
        /// The stored body, byte for byte.
        public static let body = "body"
        /// The request headers, one `Name: value` line each (curl's `--header @file` format).
        public static let headers = "headers"
        /// `<lease expiry epoch ms>`, so a later launch can tell a transfer whose result will never come.
        public static let leaseExpiry = "lease-expires-ms"
    }

    /// Writes the batch's exact stored body and its headers into a new folder named by the lease's
    /// ``BatchLease/token`` inside `directory` (created if missing), for a transfer that sends from a file
    /// (`uploadTask(with:fromFile:)`, `curl --data-binary @body`).
    ///
    /// - Throws: ``UploaderError/Code/fileAccess`` when the files cannot be written.
    public func export(into directory: String) throws(UploaderError) -> ExportedTransfer {
        let folder = directory + "/" + lease.token
        let headerLines = request.headers.map { "\($0.name): \($0.value)\n" }.joined()
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // The expiry first: a folder with it can always be cleaned up once the lease lapsed.
            try Data("\(leaseExpiresAtMilliseconds)\n".utf8).write(
                to: URL(fileURLWithPath: folder + "/" + FileName.leaseExpiry), options: .atomic)
            try Data(request.body).write(to: URL(fileURLWithPath: folder + "/" + FileName.body), options: .atomic)
            try Data(headerLines.utf8).write(
                to: URL(fileURLWithPath: folder + "/" + FileName.headers), options: .atomic)
        } catch {
            throw UploaderError(.fileAccess, "cannot export batch \(lease.batchId) to `\(folder)`", underlying: error)
        }
        return ExportedTransfer(
            batch: self, directory: folder, bodyPath: folder + "/" + FileName.body,
            headersPath: folder + "/" + FileName.headers)
    }
}
