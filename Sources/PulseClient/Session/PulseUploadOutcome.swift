/// The outcome of a batch upload that got a response.
///
/// Only ``accepted`` allows the sender to delete its outbox row: the contract's durable acceptance is
/// code 0 *and* `data == true`.

import PulseJSON

package enum PulseUploadOutcome: Sendable, Hashable {
    /// `{"code":0,"data":true}`: the server durably accepted the batch.
    case accepted
    /// Code 0 without `data: true`: not an acceptance. Keep the batch and retry later with backoff.
    case unconfirmed(PulseResponse)
    /// A non-zero code; ``PulseResponse/senderAction`` says whether and how to retry.
    case rejected(PulseResponse)

    /// Classifies an upload response.
    package init(_ response: PulseResponse) {
        if !response.isSuccess {
            self = .rejected(response)
        } else if response.data == .bool(true) {
            self = .accepted
        } else {
            self = .unconfirmed(response)
        }
    }

    /// Whether the batch was durably accepted.
    package var isAccepted: Bool {
        if case .accepted = self {
            return true
        }
        return false
    }
}
