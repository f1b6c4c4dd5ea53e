import PulseStorage

/// Keeps the queue's stored wall-clock times on the wall clock's current timeline.
///
/// Deadlines (backoff, leases, holds, the attempt window, the hand-over interval) and record and batch
/// ages are stored as wall-clock times so every process on the queue reads them alike. The queue also
/// stores the offset between the wall clock and the machine's monotonic clock (`CLOCK_BOOTTIME`, shared by
/// every process until the next boot) as it was when those times were written. When the offset has moved
/// by more than ``toleranceMilliseconds``, the wall clock stepped by that much (NTP correcting a clock that
/// was ahead, a user setting the date): every stored time moves by the same step, in the transaction that
/// noticed it, so a wait lasts as long as it was meant to and a forward step does not age records. Every
/// process on the queue can notice it; the first one rebases and stores the new offset, the others then
/// see no difference.
///
/// A step while no process is running in the same boot is caught at the next start; across a reboot the
/// monotonic clock restarts, the step cannot be known, and only the bounds of ``DeliveryStore`` apply.
enum QueueClockBase {
    /// Offset changes up to this are NTP slewing and scheduling noise, not steps.
    static let toleranceMilliseconds: Int64 = 2_000

    static let offsetSetting = "clock_offset_ms"
    static let timelineSetting = "clock_timeline"

    /// Rebases the stored times if the wall clock stepped since they were written; returns the step (0 if
    /// none). Writes only on the first call of a timeline and after a step.
    @discardableResult
    static func rebase(_ connection: SQLiteConnection, clock: UploaderClock) throws -> Int64 {
        guard let monotonic = clock.monotonicMilliseconds() else { return 0 }
        let offset = clock.nowMilliseconds() - monotonic
        let timeline = try QueueSettings.string(connection, timelineSetting)
        guard timeline == clock.timeline, let stored = try QueueSettings.integer(connection, offsetSetting) else {
            try QueueSettings.set(connection, timelineSetting, clock.timeline)
            try QueueSettings.set(connection, offsetSetting, offset)
            return 0
        }
        let step = offset - stored
        guard abs(step) > toleranceMilliseconds else { return 0 }
        try shift(connection, by: step)
        try QueueSettings.set(connection, offsetSetting, offset)
        return step
    }

    /// Moves every stored wall-clock time by `step` milliseconds (0 stays 0: "never leased").
    static func shift(_ connection: SQLiteConnection, by step: Int64) throws {
        try connection.execute(
            """
            UPDATE batch SET next_attempt_ms = next_attempt_ms + ?1, oldest_ms = oldest_ms + ?1,
                sealed_ms = sealed_ms + ?1,
                lease_until_ms = CASE WHEN lease_until_ms = 0 THEN 0 ELSE lease_until_ms + ?1 END,
                last_attempt_ms = last_attempt_ms + ?1
            """, [step])
        try connection.execute("UPDATE record SET created_ms = created_ms + ?", [step])
        try connection.execute(
            "UPDATE endpoint_state SET hold_until_ms = hold_until_ms + ? WHERE hold_until_ms > 0", [step])
        try connection.execute(
            """
            UPDATE setting SET value = value + ? WHERE typeof(value) = 'integer' AND key IN (?, ?, ?, ?)
            """,
            [
                step, QueueSettings.holdUntil, QueueSettings.authHoldUntil, QueueSettings.windowStart,
                QueueSettings.lastHandOver,
            ])
    }
}
