import PulseClient

/// Polls `condition` (real time, 5 ms steps) until it holds or `limit` passes; returns whether it held.
/// A guard against hangs, not a timing assertion.
func eventually(
    within limit: Duration = .seconds(10), _ condition: @Sendable () async -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    while clock.now < deadline {
        if await condition() {
            return true
        }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}

/// Runs `body` and returns the error it threw, or `nil` when it succeeded. An error of another type
/// is reported as a `requestFailed` error naming it, so expectations on the code fail visibly.
func clientError<Value>(_ body: () async throws -> Value) async -> PulseClientError? {
    do {
        _ = try await body()
        return nil
    } catch let error as PulseClientError {
        return error
    } catch {
        return PulseClientError(.requestFailed, "unexpected error type: \(error)")
    }
}
