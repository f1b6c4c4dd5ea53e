/// How a session spaces its connection attempts.
///
/// After the *n*-th consecutive failure (counting from 0) the next attempt waits a delay drawn
/// uniformly from `[0, min(maxDelay, initialDelay × 2ⁿ)]` ("full jitter"), so devices that lost the
/// same server do not come back in lock step. Independently, at most ``maxAttemptsPerWindow`` attempts
/// start within any sliding ``window``; a further attempt waits until the oldest one leaves the window.
///
/// Failures are: a TCP connect that fails, a CLIENT_CONNECT that is rejected or times out, and an
/// established connection that is lost before it stayed up for ``stableConnectionDuration``. A
/// connection that stayed up that long resets the count, so its loss is retried after at most
/// ``initialDelay``.
package struct PulseReconnectPolicy: Sendable, Equatable {
    /// The cap of the first delay. Default 1 s.
    package var initialDelay: Duration
    /// The largest cap; doubling stops here. Default 5 min.
    package var maxDelay: Duration
    /// Attempts allowed within one ``window``. Default 20.
    package var maxAttemptsPerWindow: Int
    /// The sliding window of ``maxAttemptsPerWindow``. Default 10 min.
    package var window: Duration
    /// How long a connection must stay up for its loss not to count as a failure. Default 60 s.
    package var stableConnectionDuration: Duration

    /// Creates a policy; every argument defaults to the documented default.
    package init(
        initialDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(300), maxAttemptsPerWindow: Int = 20,
        window: Duration = .seconds(600), stableConnectionDuration: Duration = .seconds(60)
    ) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.maxAttemptsPerWindow = maxAttemptsPerWindow
        self.window = window
        self.stableConnectionDuration = stableConnectionDuration
    }
}
