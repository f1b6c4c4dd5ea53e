import Synchronization

/// The bounded ingest queue: batches decoded and handed to the store but not yet committed.
///
/// A batch takes a slot before it is submitted for commit and gives it back once the commit
/// returned; when every slot is taken the batch is answered with 429 instead of waiting.
final class PendingBatches: Sendable {
    let capacity: Int
    private let count = Atomic<Int>(0)

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Takes a slot; `false` when the queue is full.
    func tryAcquire() -> Bool {
        var current = count.load(ordering: .relaxed)
        while current < capacity {
            let (exchanged, original) = count.compareExchange(
                expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged {
                return true
            }
            current = original
        }
        return false
    }

    /// Gives a slot back.
    func release() {
        count.subtract(1, ordering: .acquiringAndReleasing)
    }

    /// Slots taken now.
    var pending: Int { count.load(ordering: .relaxed) }
}
