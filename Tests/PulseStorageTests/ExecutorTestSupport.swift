import Dispatch
import Synchronization
import Testing

@testable import PulseStorage

/// Holds the executor's thread inside a job until released, so that other jobs can be queued behind it
/// deterministically.
final class ThreadGate: Sendable {
    private let entered = Atomic<Bool>(false)
    private let release = DispatchSemaphore(value: 0)

    /// Called from inside a job on the executor's thread: blocks that thread until ``open()``.
    func enterAndWait() {
        entered.store(true, ordering: .sequentiallyConsistent)
        release.wait()
    }

    var hasEntered: Bool {
        entered.load(ordering: .sequentiallyConsistent)
    }

    func open() {
        release.signal()
    }
}

/// Polls `condition` until it holds. This is a liveness guard, not a timing assertion: it only fails after
/// a generous deadline.
func waitUntil(
    _ description: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool
) async throws {
    for _ in 0..<20_000 {
        if condition() {
            return
        }
        try await Task.sleep(for: .milliseconds(1))
    }
    Issue.record("timed out waiting until \(description)", sourceLocation: sourceLocation)
}

struct Boom: Error, Equatable {
    let index: Int
}
