package import PulseKit

/// The time source of a ``PulseClientSession``: PulseKit's one ``TimeSource`` — a monotonic clock
/// (`now`) for heartbeats, backoff and the attempt window, the wall clock
/// (`wallClockMilliseconds`) for `clientTimeMs`, and `sleep(until:)`.
///
/// Inject a manual source (the tests' `ManualClock`) to drive a session's timers deterministically.
package typealias PulseClientClock = TimeSource

/// The real clocks (PulseKit's ``SystemTimeSource``): `CLOCK_MONOTONIC` for monotonic time,
/// `CLOCK_REALTIME` for wall time, and a sleep that a wall-clock faker does not stretch.
package typealias PulseSystemClock = SystemTimeSource
