/// The one polling helper: returns `true` as soon as `condition` holds, `false` if it still does
/// not after `limit` (real time — a generous guard against hangs, not a timing assertion).
///
/// It waits on the product, never for a fixed time: the first polls only yield to other tasks,
/// later ones pause 1 ms, growing to 10 ms, so a loaded machine is not kept busy by the poll.
///
/// ```swift
/// #expect(await eventually { upstream.received.count == 3 })
/// ```
package func eventually(
    within limit: Duration = .seconds(30), _ condition: @Sendable () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    var polls = 0
    while clock.now < deadline {
        if try await condition() { return true }
        polls += 1
        if polls < 20 {
            await Task.yield()
        } else {
            try? await Task.sleep(for: .milliseconds(min(10, (polls - 19))))
        }
    }
    return try await condition()
}
