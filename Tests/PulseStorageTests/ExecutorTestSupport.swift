import Dispatch
import PulseTestSupport
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

/// Waits (``eventually(within:_:)``) until `condition` holds, recording an issue naming `description` when
/// it still does not after the generous deadline. A liveness guard, not a timing assertion.
func waitUntil(
    _ description: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: @Sendable () -> Bool
) async throws {
    if await eventually(condition) { return }
    Issue.record("timed out waiting until \(description)", sourceLocation: sourceLocation)
}

struct Boom: Error, Equatable {
    let index: Int
}
