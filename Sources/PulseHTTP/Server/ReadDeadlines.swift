import Glibc
import Synchronization

/// The per-request read deadlines libmicrohttpd lacks: its own timeout is idle-based, so a client
/// that dribbles a byte every few seconds keeps a connection forever, and a few thousand such
/// clients take every connection slot (slowloris).
///
/// Every open connection is tracked from accept (libmicrohttpd's notify-connection callback) to
/// close, in one of three phases:
///
/// - **head**: the request line and headers must be complete by a deadline — ``headerTimeout``
///   after the connection was accepted, or, on a kept-alive connection, the longer of
///   ``headerTimeout`` and the idle timeout after the previous response was sent;
/// - **body**: the body must arrive at an average of at least ``minBodyBytesPerSecond``: it may take
///   ``bodyTimeout`` plus one second per ``minBodyBytesPerSecond`` bytes received so far;
/// - **handling**: the handler runs (the connection is suspended); no deadline.
///
/// A task checks the deadlines a few times per second and closes a late connection by
/// shutting its socket down (no response is sent, as with the idle timeout); libmicrohttpd then sees
/// the end of the stream and cleans the connection up. The check and libmicrohttpd's close
/// notification take the same lock, and libmicrohttpd closes a socket only after that notification,
/// so a socket number is never shut down after it was reused.
final class ReadDeadlines: Sendable {
    struct Limits: Sendable {
        var headerTimeout: Duration
        var bodyTimeout: Duration
        var minBodyBytesPerSecond: Int
        var idleTimeout: Duration
    }

    private enum Phase {
        case head(deadline: ContinuousClock.Instant)
        case body(since: ContinuousClock.Instant, received: Int)
        case handling
    }

    private struct Tracked {
        let socket: Int32
        var phase: Phase
    }

    private struct State {
        var connections: [UInt: Tracked] = [:]
        var stopped = false
    }

    let limits: Limits
    private let state = Mutex<State>(State())
    private let tick: Duration

    init(limits: Limits) {
        self.limits = limits
        // Check often enough that a deadline is enforced within about a quarter of the shortest one.
        let shortest = min(limits.headerTimeout, limits.bodyTimeout)
        tick = max(.milliseconds(20), min(.milliseconds(250), shortest / 4))
    }

    // MARK: - Called from libmicrohttpd's threads

    func accepted(_ connection: OpaquePointer, socket: Int32) {
        let deadline = ContinuousClock.now.advanced(by: limits.headerTimeout)
        state.withLock {
            $0.connections[Self.key(connection)] = Tracked(socket: socket, phase: .head(deadline: deadline))
        }
    }

    func closed(_ connection: OpaquePointer) {
        _ = state.withLock { $0.connections.removeValue(forKey: Self.key(connection)) }
    }

    /// The head of a request is complete; its body (if any) is read next.
    func headReceived(_ connection: OpaquePointer) {
        set(connection, .body(since: .now, received: 0))
    }

    /// `count` more body bytes arrived.
    func bodyReceived(_ connection: OpaquePointer, count: Int) {
        update(connection) { tracked in
            guard case .body(let since, let received) = tracked.phase else { return }
            tracked.phase = .body(since: since, received: received + count)
        }
    }

    /// The request is complete and its handler runs.
    func handling(_ connection: OpaquePointer) {
        set(connection, .handling)
    }

    /// The response was sent: the connection waits for its next request.
    func responded(_ connection: OpaquePointer) {
        let wait = max(limits.headerTimeout, limits.idleTimeout)
        set(connection, .head(deadline: ContinuousClock.now.advanced(by: wait)))
    }

    private func set(_ connection: OpaquePointer, _ phase: Phase) {
        update(connection) { $0.phase = phase }
    }

    /// Changes a tracked connection's entry in place (one lookup, several per request); a connection
    /// no longer tracked is left alone.
    private func update(_ connection: OpaquePointer, _ change: (inout Tracked) -> Void) {
        state.withLock { state in
            guard let index = state.connections.index(forKey: Self.key(connection)) else { return }
            change(&state.connections.values[index])
        }
    }

    private static func key(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: connection)) }

    // MARK: - The checking thread

    /// Starts the checking task; it runs until ``stop()``. Each check only takes a lock and shuts
    /// sockets down (which does not block), so it is fit for the cooperative pool.
    func start() {
        Task { [self] in
            while enforce() {
                try? await Task.sleep(for: tick)
            }
        }
    }

    /// Stops the checking task (it ends within one tick).
    func stop() {
        state.withLock { $0.stopped = true }
    }

    /// Closes every connection past its deadline; returns `false` once stopped.
    private func enforce() -> Bool {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard !state.stopped else { return false }
            for (key, tracked) in state.connections where isLate(tracked.phase, now: now) {
                Glibc.shutdown(tracked.socket, Int32(SHUT_RDWR))
                // Tracked until libmicrohttpd reports the close, but never shut down twice.
                state.connections[key]?.phase = .handling
            }
            return true
        }
    }

    private func isLate(_ phase: Phase, now: ContinuousClock.Instant) -> Bool {
        switch phase {
        case .head(let deadline):
            return now > deadline
        case .body(let since, let received):
            var allowed = limits.bodyTimeout
            if limits.minBodyBytesPerSecond > 0 {
                allowed += .seconds(Double(received) / Double(limits.minBodyBytesPerSecond))
            }
            return now > since.advanced(by: allowed)
        case .handling:
            return false
        }
    }
}
