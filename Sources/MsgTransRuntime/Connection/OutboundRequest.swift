import MsgTrans

/// One request of this side, from submission to its single completion.
///
/// The completion (``promise``) may be won by the response, the timeout, the connection closing
/// (all on the loop thread) or cancellation of the awaiting task (any thread); ``OneShot`` makes
/// the first one the only one. The bookkeeping fields belong to the loop thread.
final class OutboundRequest: @unchecked Sendable {
    enum State {
        /// Submitted to the loop, not yet seen there.
        case new
        /// Waiting for an in-flight slot or output space.
        case waiting
        /// Registered under this message id and written (or queued for writing).
        case inFlight(UInt32)
        /// Removed from the connection's bookkeeping.
        case finished
    }

    let promise = OneShot<Result<Frame, MsgTransRuntimeError>>()
    let deadline: UInt64
    let bizType: UInt8
    /// The frame to send; released once encoded (loop thread).
    var frame: Frame?
    var state = State.new  // loop thread
    var timer: TimerID?  // loop thread

    init(frame: Frame, deadline: UInt64) {
        self.frame = frame
        self.bizType = frame.bizType
        self.deadline = deadline
    }
}
