import PulseKit
import Testing

@Suite("OnceValue, GroupCommitQueue and big-endian bytes")
struct CommonTests {
    @Test("early and late waiters all get the first value; a second set changes nothing")
    func onceValue() async {
        let once = OnceValue<Int>()
        #expect(once.value == nil)
        let early = (0..<3).map { _ in Task { await once.wait() } }
        // Let the early waiters register (they may also arrive after `set`; both paths must agree).
        await Task.yield()
        #expect(once.set(7))
        #expect(!once.set(8))
        for waiter in early {
            #expect(await waiter.value == 7)
        }
        #expect(await once.wait() == 7)
        #expect(once.value == 7)
    }

    @Test("ifPending runs only while the value is not set, after the waiter is counted")
    func onceValueIfPending() async {
        let once = OnceValue<String>()
        // Setting from ifPending resumes the waiter it just registered.
        let first = await once.wait(ifPending: { once.set("closed") })
        #expect(first == "closed")
        var ran = false
        let second = await once.wait(ifPending: { ran = true })
        #expect(second == "closed")
        #expect(!ran)
    }

    @Test("a single job at the head runs alone; else group jobs (up to the limit) go together, singles stay in place")
    func groupCommitQueue() {
        var queue = GroupCommitQueue<String, Int>()
        #expect(queue.take(maximumBatchSize: 2) == nil)
        queue.append(.single("a"))
        queue.append(.grouped(1))
        queue.append(.single("b"))
        queue.append(.grouped(2))
        queue.append(.grouped(3))
        #expect(queue.count == 5)
        #expect(queue.containsSingle)
        #expect(describe(queue.take(maximumBatchSize: 2)) == "single a")
        #expect(describe(queue.take(maximumBatchSize: 2)) == "batch [1, 2]")
        // The single job now heads the queue, before the group job left over.
        #expect(describe(queue.take(maximumBatchSize: 2)) == "single b")
        #expect(!queue.containsSingle)
        queue.requeueFront([4, 5])
        #expect(describe(queue.take(maximumBatchSize: 8)) == "batch [4, 5, 3]")
        #expect(queue.count == 0)
        #expect(queue.first == nil)
    }

    @Test("integers are written most significant byte first, as wide as their type")
    func bigEndianBytes() {
        var bytes: [UInt8] = [0xAA]
        bytes.appendBigEndian(UInt32(0x0102_0304))
        bytes.appendBigEndian(UInt16(0x0506))
        #expect(bytes == [0xAA, 1, 2, 3, 4, 5, 6])
        #expect([UInt8](bigEndian: Int64(-2)) == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE])
        #expect([UInt8](bigEndian: Int32(1)) == [0, 0, 0, 1])
    }

    private func describe(_ work: GroupCommitQueue<String, Int>.Work?) -> String {
        switch work {
        case .single(let job): "single \(job)"
        case .batch(let jobs): "batch \(jobs)"
        case nil: "nil"
        }
    }
}
