import CPulseShims
import Synchronization

/// The memory all requests in flight may hold at once: buffered bodies and the working sets of
/// decoding them.
///
/// Every request reserves an estimate before it holds the memory — the server as soon as it knows
/// the wire size (a declared `Content-Length`, or chunk by chunk for a chunked body; see
/// ``HTTPServerConfiguration/requestMemoryEstimate``), the handler again when decoding makes the
/// body bigger (``RequestMemoryReservation/grow(to:)``) — and the reservation is released when the
/// request is finished (its response sent, or the client gone). A reservation that would take the
/// total past ``limitBytes`` waits up to ``HTTPServerConfiguration/requestMemoryWait`` for other
/// requests to finish; then the request is refused with 503 and `Retry-After`. A single request may
/// always reserve up to the limit when nothing else is reserved, so a budget smaller than one body
/// still serves one such request at a time.
///
/// When a large reservation (at least ``trimThresholdBytes``) is released, the freed heap memory is
/// handed back to the operating system (`malloc_trim`), so the resident size falls again after a
/// burst of big requests.
package final class RequestMemoryBudget: Sendable {
    /// The most bytes reserved at once.
    package let limitBytes: Int
    /// Releasing a reservation at least this large returns free heap memory to the system.
    package static let trimThresholdBytes = 4 << 20

    private let reserved = Mutex<Int>(0)
    fileprivate let waiting = Atomic<Int>(0)

    /// Creates a budget of `limitBytes` (at least 1; the gateway's default is 512 MiB).
    package init(limitBytes: Int) {
        self.limitBytes = max(limitBytes, 1)
    }

    /// The bytes reserved right now by requests in flight.
    package var reservedBytes: Int { reserved.withLock { $0 } }

    /// Requests waiting right now for other requests to give memory back
    /// (``RequestMemoryReservation/grow(to:)``).
    package var waitingRequests: Int { waiting.load(ordering: .relaxed) }

    /// Adds `extra` bytes to a reservation that holds `held` already, if the total stays within the
    /// limit or that reservation is the only one. The caller keeps its own total within the limit.
    func tryReserve(_ extra: Int, held: Int) -> Bool {
        guard extra > 0 else { return true }
        return reserved.withLock { total in
            guard total == held || extra <= limitBytes - total else { return false }
            total += extra
            return true
        }
    }

    /// Gives back `bytes`; `largest` is the most the ending reservation ever held, which decides
    /// whether free heap memory goes back to the system.
    func release(_ bytes: Int, largest: Int) {
        guard bytes > 0 else { return }
        reserved.withLock { $0 = max(0, $0 - bytes) }
        if largest >= Self.trimThresholdBytes { pg_release_free_memory() }
    }
}

/// One request's share of the ``RequestMemoryBudget``.
///
/// The server opens it with the estimate for the wire body and releases it when the request is
/// finished; a handler that is about to hold more (a decompressed body, a transcoded copy) grows it
/// first with ``grow(to:)`` and refuses the request when that fails.
package final class RequestMemoryReservation: Sendable {
    /// The budget this reservation draws from.
    package let budget: RequestMemoryBudget
    /// How long ``grow(to:)`` waits for other requests to release memory.
    package let wait: Duration

    private struct State {
        var bytes = 0
        var largest = 0
        var released = false
    }

    private let state = Mutex(State())

    init(budget: RequestMemoryBudget, wait: Duration) {
        self.budget = budget
        self.wait = wait
    }

    /// The bytes this request has reserved.
    package var bytes: Int { state.withLock { $0.bytes } }

    /// Raises the reservation to `total` bytes (at most the whole budget) at once if the budget
    /// allows; `true` when it holds that much afterwards. Never waits: for a caller on a thread that
    /// must not (a libmicrohttpd dispatcher), which continues in a task with ``grow(to:)`` when this
    /// fails.
    package func growNow(to total: Int) -> Bool {
        state.withLock { state in
            guard !state.released else { return false }
            let target = min(total, budget.limitBytes)
            let extra = target - state.bytes
            guard extra > 0 else { return true }
            guard budget.tryReserve(extra, held: state.bytes) else { return false }
            state.bytes = target
            state.largest = max(state.largest, target)
            return true
        }
    }

    /// Raises the reservation to `total` bytes, waiting up to ``wait`` for other requests to give
    /// memory back. Returns `false` when the budget stays too full (refuse the request with 503 and
    /// `Retry-After`); the reservation is then unchanged.
    package func grow(to total: Int) async -> Bool {
        if growNow(to: total) { return true }
        budget.waiting.add(1, ordering: .relaxed)
        defer { budget.waiting.subtract(1, ordering: .relaxed) }
        let deadline = ContinuousClock.now.advanced(by: wait)
        while ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
            if growNow(to: total) { return true }
        }
        return false
    }

    /// Gives everything back (once); further growth fails.
    func release() {
        let (bytes, largest) = state.withLock { state -> (Int, Int) in
            guard !state.released else { return (0, 0) }
            state.released = true
            defer { state.bytes = 0 }
            return (state.bytes, state.largest)
        }
        budget.release(bytes, largest: largest)
    }
}
