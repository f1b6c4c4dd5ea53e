/// Hands out msgtrans message ids for one connection and direction.
///
/// Ids start at 1, increase by one and wrap from `UInt32.max` back to 1; 0 is never returned.
/// With requests bounded by an in-flight cap far below 2³² and timeouts, a wrapped id cannot
/// collide with a request still waiting for its response in practice; callers that need a hard
/// guarantee skip ids that are still in flight.
public struct MessageIDAllocator: Sendable {
    private var upcoming: UInt32

    /// Creates an allocator whose first id is 1.
    public init() {
        upcoming = 1
    }

    /// Creates an allocator whose first id is `first` (or 1 if `first` is 0).
    public init(first: UInt32) {
        upcoming = first == 0 ? 1 : first
    }

    /// Returns the next id.
    public mutating func next() -> UInt32 {
        let id = upcoming
        upcoming = id == UInt32.max ? 1 : id + 1
        return id
    }
}
