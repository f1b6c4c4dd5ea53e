import MsgTrans
import MsgTransRuntime
import PulseProtocol
import Synchronization

/// The sending half of one identity's sliding window: it hands queued rows to the identity's
/// connection and, as each answer arrives, the next one — from the answer's completion, on the
/// connection's event loop thread, so a steady window costs no thread hand-off per row (the loop
/// reads the answers, sends the next requests, and writes all that one iteration produced in one
/// socket write).
///
/// Rows go out in queue order (one submitter at a time, through the loop's ordered job queue), and
/// row `i` only while `i` is less than the oldest unanswered row's position plus `window`. Each
/// request holds one permit of the forwarder's global in-flight bound, taken without waiting; when
/// none is free the pump waits for the worker to get one (``grant()``). The first answer that is
/// not `{"code":0,"data":true}` (or a request that gets no answer) stops it: nothing more is sent,
/// requests in flight finish.
///
/// The worker (``Forwarder``) supplies rows (``push(_:)``), deletes accepted ones and settles the
/// others; it sleeps in ``next()`` until there is something for it: an answer that was not an
/// acceptance, accepted rows while no delete is running, a finished delete, a queue below one
/// window while more rows may exist, no permit, or nothing left in flight.
final class WindowPump: Sendable {
    /// What became of a row that was sent.
    enum Outcome: Sendable {
        /// `{"code":0,"data":true}`.
        case accepted
        /// Answered, but not with an acceptance.
        case refused(UpstreamReply)
        /// No answer (timeout, disconnect, not connected).
        case failed(UpstreamFailure)
    }

    struct Finished: Sendable {
        var row: OutboxRow
        var outcome: Outcome
    }

    /// What the worker is woken with.
    struct Wake: Sendable {
        /// Rows answered (or failed) since the last wake, in completion order.
        var finished: [Finished]
        /// Rows queued and not yet sent.
        var queued: Int
        /// Rows in flight.
        var inFlight: Int
        /// Whether nothing is in flight and nothing more will be sent (stopped, or the queue is empty).
        var idle: Bool
        /// No permit of the global bound was free for the next row.
        var starved: Bool
        /// The outcome of the delete that finished since the last wake, if one did.
        var deleted: Bool?
    }

    private struct State {
        var queued = FIFO<OutboxRow>()
        var nextIndex = 0
        /// Positions of the rows in flight, ascending.
        var inFlight: [Int] = []
        var finished: [Finished] = []
        var stopped = false
        var submitting = false
        var pumpAgain = false
        var starved = false
        /// Permits the worker obtained for the pump (after ``starved``).
        var granted = 0
        var deleting = false
        /// Rows accepted since the last delete started (the worker is woken for a delete once
        /// ``WindowPump/deleteBatch`` of them are there, or nothing is in flight any more).
        var acceptedSinceDelete = 0
        var deleted: Bool?
        /// Whether the worker wants to hear that the queue ran low (more rows may exist).
        var refillWanted = true
        var waiter: CheckedContinuation<Wake, Never>?
    }

    private let window: Int
    /// Accepted rows that make a delete worth starting while requests are still in flight: half a
    /// window, so a steady window costs one delete commit per four rows or fewer, not one per
    /// answer.
    let deleteBatch: Int
    private let session: any UpstreamSession
    private let limiter: AsyncLimiter
    private let observeLatency: @Sendable (Double) -> Void
    private let state = Mutex(State())

    init(
        window: Int, session: any UpstreamSession, limiter: AsyncLimiter,
        observeLatency: @escaping @Sendable (Double) -> Void
    ) {
        self.window = max(1, window)
        self.deleteBatch = max(1, window / 2)
        self.session = session
        self.limiter = limiter
        self.observeLatency = observeLatency
    }

    /// Whether nothing is in flight, nothing more will be sent and every finished row was handed
    /// to the worker (by ``next()``).
    var isDone: Bool { state.withLock { Self.idle($0) && $0.finished.isEmpty && $0.deleted == nil } }

    /// Queues rows (in order, behind those queued) and sends what the window allows.
    func push(_ rows: some Sequence<OutboxRow>) {
        state.withLock { state in
            for row in rows { state.queued.append(row) }
            state.refillWanted = true
        }
        pump()
    }

    /// Tells the pump whether to wake the worker when the queue runs low.
    func setRefillWanted(_ wanted: Bool) {
        state.withLock { $0.refillWanted = wanted }
    }

    /// Sends nothing more (rows in flight finish).
    func stop() {
        state.withLock { $0.stopped = true }
        signal()
    }

    /// Hands the pump a permit of the global bound the worker waited for.
    func grant() {
        state.withLock { $0.granted += 1 }
        pump()
    }

    /// A delete of accepted rows started (the pump does not wake the worker for further accepted
    /// rows until it finished).
    func deleteStarted() {
        state.withLock { state in
            state.deleting = true
            state.acceptedSinceDelete = 0
        }
    }

    /// The delete that ``deleteStarted()`` announced finished.
    func deleteFinished(_ succeeded: Bool) {
        state.withLock { state in
            state.deleting = false
            state.deleted = succeeded
        }
        signal()
    }

    /// Waits until there is something for the worker (see the type's description).
    func next() async -> Wake {
        await withCheckedContinuation { (continuation: CheckedContinuation<Wake, Never>) in
            let ready = state.withLock { state -> Wake? in
                if Self.shouldWake(state, window: window) { return Self.take(&state) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    // MARK: - Sending

    /// Sends queued rows while the window and the global bound allow; one caller at a time (a
    /// caller that finds another one sending leaves it to go on).
    private func pump() {
        let first = state.withLock { state -> Bool in
            if state.submitting {
                state.pumpAgain = true
                return false
            }
            state.submitting = true
            return true
        }
        guard first else { return }
        while true {
            var surplus = 0
            let next = state.withLock { state -> (OutboxRow, Int)? in
                guard !state.stopped, !state.queued.isEmpty,
                    state.nextIndex < (state.inFlight.first ?? state.nextIndex) + window
                else {
                    // A permit the worker obtained that cannot be used now goes back at once.
                    surplus = state.granted
                    state.granted = 0
                    return nil
                }
                if state.granted > 0 {
                    state.granted -= 1
                } else if !limiter.tryAcquire() {
                    state.starved = true
                    return nil
                }
                guard let row = state.queued.popFirst() else { return nil }
                let index = state.nextIndex
                state.nextIndex += 1
                state.inFlight.append(index)
                return (row, index)
            }
            for _ in 0..<surplus { limiter.release() }
            guard let (row, index) = next else {
                let again = state.withLock { state -> Bool in
                    if state.pumpAgain {
                        state.pumpAgain = false
                        return true
                    }
                    state.submitting = false
                    return false
                }
                if again { continue }
                signal()
                return
            }
            let started = ContinuousClock.now
            let submitted = session.submit(
                .clientEventBatchUpload, wirePayload: row.payload,
                compression: Compression(rawValue: row.compression) ?? .none
            ) { result in
                self.finish(index, row: row, result: result, started: started)
            }
            if !submitted {
                finish(
                    index, row: row,
                    result: .failure(UpstreamFailure(kind: .transport, message: "the upstream connection is not open")),
                    started: started)
            }
        }
    }

    private func finish(
        _ index: Int, row: OutboxRow, result: Result<UpstreamReply, UpstreamFailure>, started: ContinuousClock.Instant
    ) {
        limiter.release()
        let outcome: Outcome
        switch result {
        case .success(let reply):
            let elapsed = ContinuousClock.now - started
            observeLatency(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            outcome = reply.confirmsAcceptance ? .accepted : .refused(reply)
        case .failure(let failure):
            outcome = .failed(failure)
        }
        state.withLock { state in
            if let position = state.inFlight.firstIndex(of: index) { state.inFlight.remove(at: position) }
            if case .accepted = outcome { state.acceptedSinceDelete += 1 } else { state.stopped = true }
            state.finished.append(Finished(row: row, outcome: outcome))
        }
        pump()
    }

    // MARK: - Waking the worker

    private func signal() {
        let resume = state.withLock { state -> (CheckedContinuation<Wake, Never>, Wake)? in
            guard let waiter = state.waiter, Self.shouldWake(state, window: window) else { return nil }
            state.waiter = nil
            return (waiter, Self.take(&state))
        }
        if let (waiter, wake) = resume { waiter.resume(returning: wake) }
    }

    private static func idle(_ state: State) -> Bool {
        state.inFlight.isEmpty && (state.stopped || state.queued.isEmpty)
    }

    private static func shouldWake(_ state: State, window: Int) -> Bool {
        if state.deleted != nil || state.starved { return true }
        for finished in state.finished {
            guard case .accepted = finished.outcome else { return true }
        }
        if !state.deleting && state.acceptedSinceDelete > 0
            && (state.acceptedSinceDelete >= max(1, window / 2) || state.inFlight.isEmpty || state.stopped)
        {
            return true
        }
        if state.refillWanted && !state.stopped && state.queued.count < window { return true }
        return idle(state) && !state.deleting
    }

    private static func take(_ state: inout State) -> Wake {
        defer {
            state.finished = []
            state.deleted = nil
            state.starved = false
        }
        return Wake(
            finished: state.finished, queued: state.queued.count, inFlight: state.inFlight.count, idle: idle(state),
            starved: state.starved,
            deleted: state.deleted)
    }
}
