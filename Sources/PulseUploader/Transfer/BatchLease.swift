/// One claim of one sealed batch by an out-of-process transfer: the batch id and the attempt number the
/// claim took. Every claim of a batch takes the next number, so a lease that expired and was claimed again
/// is told apart from the newer claim.
///
/// Keep ``token`` with the transfer (a background `URLSession` task's `taskDescription`, a file name) and
/// rebuild the lease with ``init(token:)`` when the result arrives, possibly in a later launch.
public struct BatchLease: Sendable, Hashable, CustomStringConvertible {
    /// The batch's `Apsio-Batch-Id`.
    public let batchId: String
    /// The batch's attempt number this claim took (1 for the first attempt).
    public let attempt: Int

    /// Creates a lease.
    public init(batchId: String, attempt: Int) {
        self.batchId = batchId
        self.attempt = attempt
    }

    /// `<batch id>-<attempt>`: safe as a file name and as a task description.
    public var token: String { "\(batchId)-\(attempt)" }

    /// The lease a ``token`` names, or `nil` if `token` is not one.
    public init?(token: String) {
        guard let dash = token.lastIndex(of: "-"), let attempt = Int(token[token.index(after: dash)...]),
            attempt > 0
        else { return nil }
        let batchId = String(token[..<dash])
        guard !batchId.isEmpty, batchId.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 || $0 >= 0x61 && $0 <= 0x66 })
        else { return nil }
        self.init(batchId: batchId, attempt: attempt)
    }

    public var description: String { token }
}
