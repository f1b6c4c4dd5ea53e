import MsgTrans
import Testing

@Suite("MessageIDAllocator")
struct MessageIDAllocatorTests {
    @Test func startsAtOneAndCountsUp() {
        var allocator = MessageIDAllocator()
        #expect((0..<5).map { _ in allocator.next() } == [1, 2, 3, 4, 5])
    }

    @Test func wrapsPastUInt32MaxToOneNeverZero() {
        var allocator = MessageIDAllocator(first: UInt32.max - 2)
        #expect((0..<5).map { _ in allocator.next() } == [UInt32.max - 2, UInt32.max - 1, UInt32.max, 1, 2])
    }

    @Test func zeroIsNeverHandedOut() {
        var allocator = MessageIDAllocator(first: 0)
        #expect(allocator.next() == 1)
    }

    @Test func copiesAreIndependent() {
        var first = MessageIDAllocator()
        _ = first.next()
        var second = first
        #expect(first.next() == 2)
        #expect(second.next() == 2)
    }
}
