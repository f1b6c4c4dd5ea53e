/// A small first-in first-out queue that allocates nothing while empty.
package struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    /// Creates an empty queue.
    package init() {}

    package var isEmpty: Bool { head == storage.count }
    package var count: Int { storage.count - head }

    package mutating func append(_ element: Element) {
        storage.append(element)
    }

    package mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage = []
            head = 0
        } else if head >= 32 && head * 2 >= storage.count {
            storage.removeSubrange(0..<head)
            head = 0
        }
        return element
    }

    /// Removes every element matching `predicate`, keeping the order of the rest.
    package mutating func removeAll(where predicate: (Element) -> Bool) {
        var kept: [Element] = []
        kept.reserveCapacity(count)
        for index in head..<storage.count where !predicate(storage[index]) {
            kept.append(storage[index])
        }
        storage = kept
        head = 0
    }

    /// Removes and returns all elements in order.
    package mutating func drain() -> [Element] {
        let elements = Array(storage[head...])
        storage = []
        head = 0
        return elements
    }
}

extension FIFO: Sendable where Element: Sendable {}
