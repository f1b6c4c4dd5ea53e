import PulseKit
import PulseProtocol

/// The connection lifecycle of a ``PulseClientSession`` as a pure state machine.
///
/// Every input (a request wanting a connection, a connect outcome, a lost connection, a heartbeat
/// answer, a timer, `close()`) is a mutating call that takes the current monotonic time and returns
/// the action the session must perform. The machine never does I/O, never reads a clock and draws
/// randomness only from the injected generator, so it is tested without sockets or timers. It is
/// generic over the connection handle for the same reason.
///
/// Connections are numbered by *generation*; an event that names an older generation than the
/// current one is stale and ignored (for example the close notification of a connection the session
/// already abandoned).
struct SessionStateMachine<Connection> {
    /// An established, registered connection.
    struct Established {
        var generation: UInt64
        var connection: Connection
        var info: PulseSessionInfo
        var connectedAt: Duration
    }

    enum State {
        /// No connection; the next attempt may start at `nextAttemptAt` (the window cap permitting).
        case idle(nextAttemptAt: Duration)
        /// A TCP connect plus CLIENT_CONNECT is running.
        case connecting(generation: UInt64)
        /// CLIENT_CONNECT succeeded on this connection.
        case connected(Established)
        /// `close()` was called; terminal.
        case closed
    }

    /// What the server reported in a heartbeat result.
    struct HeartbeatUpdate: Sendable, Equatable {
        var serverTimeMs: Int64
        var configRevision: Int64
        var heartbeatIntervalMs: Int64
        var collectKinds: [PulseEventKind]
    }

    private(set) var state: State = .idle(nextAttemptAt: .zero)
    private(set) var backoff: ReconnectBackoff
    private var lastGeneration: UInt64 = 0
    /// Whether lost or failed connections are re-established in the background.
    let keepConnected: Bool
    /// Becomes true with the first demand; background reconnection never starts before it.
    private var active = false
    /// The latest configuration revision reported by the server, if any.
    private(set) var configRevision: Int64?

    init(policy: PulseReconnectPolicy, random: RandomSource, keepConnected: Bool) {
        backoff = ReconnectBackoff(policy: policy, random: random)
        self.keepConnected = keepConnected
    }

    /// The current session information while connected.
    var info: PulseSessionInfo? {
        if case .connected(let established) = state {
            return established.info
        }
        return nil
    }

    var isClosed: Bool {
        if case .closed = state {
            return true
        }
        return false
    }

    static var closedError: PulseClientError {
        PulseClientError(.sessionClosed, "the session is closed")
    }

    // MARK: - Demand

    enum DemandAction {
        /// Send on this connection.
        case use(Connection, generation: UInt64)
        /// Establish connection `generation`, then report with ``connectSucceeded(generation:connection:info:now:)``
        /// or ``connectFailed(generation:now:)``. Wait for it like ``join``.
        case startConnect(generation: UInt64)
        /// An attempt is running: wait for its outcome, then ask again.
        case join
        /// No attempt is allowed before this time.
        case waitUntil(Duration)
        /// The session is closed.
        case fail(PulseClientError)
    }

    /// A request needs a connection.
    mutating func connectionWanted(now: Duration) -> DemandAction {
        switch state {
        case .connected(let established):
            return .use(established.connection, generation: established.generation)
        case .connecting:
            return .join
        case .closed:
            return .fail(Self.closedError)
        case .idle(let nextAttemptAt):
            active = true
            let allowed = max(nextAttemptAt, backoff.windowAllows(at: now))
            guard allowed <= now else {
                return .waitUntil(allowed)
            }
            return .startConnect(generation: beginAttempt(now: now))
        }
    }

    enum TimerAction: Equatable {
        case startConnect(generation: UInt64)
        case waitUntil(Duration)
        case none
    }

    /// The background reconnect timer fired.
    mutating func reconnectTimerFired(now: Duration) -> TimerAction {
        guard keepConnected, active, case .idle(let nextAttemptAt) = state else {
            return .none
        }
        let allowed = max(nextAttemptAt, backoff.windowAllows(at: now))
        guard allowed <= now else {
            return .waitUntil(allowed)
        }
        return .startConnect(generation: beginAttempt(now: now))
    }

    private mutating func beginAttempt(now: Duration) -> UInt64 {
        lastGeneration += 1
        backoff.recordAttempt(at: now)
        state = .connecting(generation: lastGeneration)
        return lastGeneration
    }

    // MARK: - Connect outcome

    enum ConnectSucceededAction {
        /// Resume the waiters, heartbeat at `heartbeatAt`, publish `revisionChanged` if set.
        case connected(PulseSessionInfo, heartbeatAt: Duration, revisionChanged: Int64?)
        /// The attempt is stale or the session closed meanwhile: close this connection.
        case discard(Connection)
    }

    mutating func connectSucceeded(
        generation: UInt64, connection: Connection, info: PulseSessionInfo, now: Duration
    ) -> ConnectSucceededAction {
        guard case .connecting(let current) = state, current == generation else {
            return .discard(connection)
        }
        state = .connected(
            Established(generation: generation, connection: connection, info: info, connectedAt: now))
        return .connected(
            info, heartbeatAt: now + info.heartbeatInterval,
            revisionChanged: observeRevision(info.configRevision))
    }

    enum ConnectFailedAction: Equatable {
        /// Fail the waiters; if `reconnectAt` is set, try again in the background then.
        case failWaiters(reconnectAt: Duration?)
        /// Stale report: nothing to do.
        case none
    }

    mutating func connectFailed(generation: UInt64, now: Duration) -> ConnectFailedAction {
        guard case .connecting(let current) = state, current == generation else {
            return .none
        }
        let next = now + backoff.failureDelay()
        state = .idle(nextAttemptAt: next)
        return .failWaiters(reconnectAt: backgroundTime(next, now: now))
    }

    // MARK: - Losing the connection

    enum LostAction: Equatable {
        /// Stop heartbeating; if `reconnectAt` is set, reconnect in the background then.
        case lost(reconnectAt: Duration?)
        case none
    }

    /// The transport of connection `generation` closed.
    mutating func connectionClosed(generation: UInt64, now: Duration) -> LostAction {
        guard case .connected(let established) = state, established.generation == generation else {
            return .none
        }
        let next = lose(established, now: now)
        return .lost(reconnectAt: backgroundTime(next, now: now))
    }

    enum AbandonReason: Equatable {
        /// The server no longer knows the session (401, or a rejected heartbeat): reconnect at once.
        case unauthorized
        /// The server stopped answering (a heartbeat timed out): reconnect like after a loss.
        case unresponsive
    }

    enum AbandonAction {
        /// Close this connection; if `reconnectAt` is set, reconnect in the background then.
        case close(Connection, reconnectAt: Duration?)
        case none
    }

    /// The session gives up on connection `generation` while its transport is still open.
    mutating func abandonConnection(generation: UInt64, reason: AbandonReason, now: Duration) -> AbandonAction {
        guard case .connected(let established) = state, established.generation == generation else {
            return .none
        }
        let next: Duration
        switch reason {
        case .unauthorized:
            next = now
            state = .idle(nextAttemptAt: now)
        case .unresponsive:
            next = lose(established, now: now)
        }
        return .close(established.connection, reconnectAt: backgroundTime(next, now: now))
    }

    /// Moves to idle after losing `established`; returns the earliest next attempt.
    private mutating func lose(_ established: Established, now: Duration) -> Duration {
        if now - established.connectedAt >= backoff.policy.stableConnectionDuration {
            backoff.reset()
        }
        let next = now + backoff.failureDelay()
        state = .idle(nextAttemptAt: next)
        return next
    }

    private mutating func backgroundTime(_ next: Duration, now: Duration) -> Duration? {
        guard keepConnected else { return nil }
        return max(next, backoff.windowAllows(at: now))
    }

    // MARK: - Heartbeats

    enum HeartbeatDueAction {
        case send(Connection, connectionId: String)
        case none
    }

    mutating func heartbeatDue(generation: UInt64) -> HeartbeatDueAction {
        guard case .connected(let established) = state, established.generation == generation else {
            return .none
        }
        return .send(established.connection, connectionId: established.info.connectionId)
    }

    enum HeartbeatScheduleAction: Equatable {
        /// Send the next heartbeat at `at`; publish `revisionChanged` if set.
        case schedule(at: Duration, revisionChanged: Int64?)
        case none
    }

    /// An accepted heartbeat result arrived.
    mutating func heartbeatAccepted(generation: UInt64, update: HeartbeatUpdate, now: Duration)
        -> HeartbeatScheduleAction
    {
        guard case .connected(var established) = state, established.generation == generation else {
            return .none
        }
        established.info.serverTimeMs = update.serverTimeMs
        established.info.configRevision = update.configRevision
        established.info.serverHeartbeatIntervalMs = update.heartbeatIntervalMs
        established.info.heartbeatInterval = HeartbeatInterval.clamped(milliseconds: update.heartbeatIntervalMs)
        established.info.collectKinds = update.collectKinds
        state = .connected(established)
        return .schedule(
            at: now + established.info.heartbeatInterval,
            revisionChanged: observeRevision(update.configRevision))
    }

    /// A heartbeat got a transient failure (429, 5xx, ...): keep the connection, try at the usual interval.
    mutating func heartbeatFailedTransiently(generation: UInt64, now: Duration) -> HeartbeatScheduleAction {
        guard case .connected(let established) = state, established.generation == generation else {
            return .none
        }
        return .schedule(at: now + established.info.heartbeatInterval, revisionChanged: nil)
    }

    private mutating func observeRevision(_ revision: Int64) -> Int64? {
        guard configRevision != revision else { return nil }
        configRevision = revision
        return revision
    }

    // MARK: - Closing

    enum CloseAction {
        /// Close this connection (if any) and fail everything pending.
        case close(Connection?)
        case alreadyClosed
    }

    mutating func close() -> CloseAction {
        let previous = state
        state = .closed
        switch previous {
        case .connected(let established):
            return .close(established.connection)
        case .idle, .connecting:
            return .close(nil)
        case .closed:
            return .alreadyClosed
        }
    }
}
