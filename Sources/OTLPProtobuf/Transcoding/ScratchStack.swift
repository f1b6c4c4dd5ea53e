/// A growable stack of trivial values for the ``Transcoder``'s working memory (occurrences, chains,
/// the field path): read and written through its pointer, without the bounds, uniqueness and
/// reference-count checks of an `Array`. Elements below ``count`` are the ones pushed; the caller
/// keeps every index it reads below it.
struct ScratchStack<Element: BitwiseCopyable>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    /// The number of elements on the stack.
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = UnsafeMutablePointer.allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    subscript(index: Int) -> Element {
        get { base[index] }
        set { base[index] = newValue }
    }

    /// Pushes `element`.
    @inline(__always)
    mutating func append(_ element: Element) {
        if count == capacity { grow(to: count + 1) }
        base[count] = element
        count += 1
    }

    /// Pushes `extra` elements of unspecified value (written before they are read); returns the
    /// index of the first.
    @inline(__always)
    mutating func extend(by extra: Int) -> Int {
        let first = count
        if capacity - first < extra { grow(to: first + extra) }
        count = first + extra
        return first
    }

    /// Pops the top element.
    @inline(__always)
    mutating func removeLast() { count -= 1 }

    /// Pops every element above the first `newCount`.
    @inline(__always)
    mutating func truncate(to newCount: Int) { count = newCount }

    /// The elements on the stack, bottom first.
    var elements: [Element] { Array(UnsafeBufferPointer(start: base, count: count)) }

    private mutating func grow(to minimum: Int) {
        let grown = max(minimum, capacity * 2)
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: grown)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity = grown
    }
}
