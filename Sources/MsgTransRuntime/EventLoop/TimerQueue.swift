/// Identifies a scheduled timer so it can be cancelled.
struct TimerID: Hashable {
    fileprivate let value: UInt64
}

/// Deadlines of one event loop: a binary min-heap with lazy cancellation.
///
/// Cancelling removes the action at once; its heap entry is skipped when it reaches the top. The
/// heap is rebuilt from live entries when stale ones outnumber them, so memory stays proportional
/// to the number of live timers.
struct TimerQueue {
    private struct Entry {
        var deadline: UInt64
        var id: UInt64
    }

    private var heap: [Entry] = []
    private var actions: [UInt64: () -> Void] = [:]
    private var nextID: UInt64 = 1

    /// The number of live (not yet fired, not cancelled) timers.
    var count: Int { actions.count }

    mutating func schedule(at deadline: UInt64, _ action: @escaping () -> Void) -> TimerID {
        let id = nextID
        nextID += 1
        actions[id] = action
        heap.append(Entry(deadline: deadline, id: id))
        siftUp(heap.count - 1)
        return TimerID(value: id)
    }

    mutating func cancel(_ timer: TimerID) {
        guard actions.removeValue(forKey: timer.value) != nil else { return }
        if heap.count > 64 && heap.count > 2 * actions.count {
            heap.removeAll { actions[$0.id] == nil }
            for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) {
                siftDown(index)
            }
        }
    }

    /// The earliest live deadline.
    mutating func nextDeadline() -> UInt64? {
        dropCancelledTop()
        return heap.first?.deadline
    }

    /// Removes and returns the action of the earliest timer due at `now`, if any.
    mutating func popExpired(now: UInt64) -> (() -> Void)? {
        dropCancelledTop()
        guard let top = heap.first, top.deadline <= now else { return nil }
        removeTop()
        return actions.removeValue(forKey: top.id)
    }

    private mutating func dropCancelledTop() {
        while let top = heap.first, actions[top.id] == nil {
            removeTop()
        }
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
    }

    private func less(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count && less(heap[left + 1], heap[left]) {
                smallest = left + 1
            }
            guard less(heap[smallest], heap[parent]) else { return }
            heap.swapAt(smallest, parent)
            parent = smallest
        }
    }
}
