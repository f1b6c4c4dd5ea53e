import PulseClient
import PulseKit

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
