import PulseKit
import Synchronization
import Testing

@testable import MsgTransRuntime

@Suite("Building blocks")
struct SupportTypeTests {
    @Test("OneShot: of many threads racing to complete, exactly one wins and the waiter sees its value")
    func oneShotRace() async {
        for _ in 0..<200 {
            let shot = OneShot<Int>()
            let winners = Tally()
            let value: Int = await withCheckedContinuation { continuation in
                for contender in 0..<4 {
                    _ = DetachedThread.start {
                        if shot.complete(contender) {
                            winners.increment()
                        }
                    }
                }
                _ = shot.install(continuation)
            }
            await winners.wait(untilAtLeast: 1)
            #expect((0..<4).contains(value))
            #expect(!shot.complete(99))
            #expect(winners.value == 1)
        }
    }

    @Test("OneShot: a value supplied before the waiter arrives is delivered at install")
    func oneShotEarlyValue() async {
        let shot = OneShot<String>()
        #expect(shot.complete("early"))
        #expect(shot.isCompleted)
        let value: String = await withCheckedContinuation { continuation in
            #expect(!shot.install(continuation))
        }
        #expect(value == "early")
    }

    @Test("TimerQueue pops in deadline order and skips cancelled timers")
    func timerQueueOrder() {
        var queue = TimerQueue()
        let fired = EventLog()
        _ = queue.schedule(at: 30) { fired.record("30") }
        let cancelled = queue.schedule(at: 10) { fired.record("10") }
        _ = queue.schedule(at: 20) { fired.record("20") }
        _ = queue.schedule(at: 20) { fired.record("20b") }
        queue.cancel(cancelled)
        #expect(queue.nextDeadline() == 20)
        while let action = queue.popExpired(now: 25) {
            action()
        }
        #expect(fired.all == ["20", "20b"])
        #expect(queue.count == 1)
        #expect(queue.popExpired(now: 29) == nil)
        queue.popExpired(now: 30)?()
        #expect(fired.all == ["20", "20b", "30"])
        #expect(queue.nextDeadline() == nil)
    }

    @Test("TimerQueue stays proportional to live timers under heavy cancellation")
    func timerQueueCompaction() {
        var queue = TimerQueue()
        for index in 0..<10_000 {
            let timer = queue.schedule(at: UInt64(index)) {}
            queue.cancel(timer)
        }
        #expect(queue.count == 0)
        #expect(queue.nextDeadline() == nil)
        let kept = queue.schedule(at: 5) {}
        _ = kept
        #expect(queue.nextDeadline() == 5)
    }

    @Test("FIFO keeps order across growth, removal and draining")
    func fifo() {
        var queue = FIFO<Int>()
        #expect(queue.isEmpty)
        for value in 0..<100 {
            queue.append(value)
        }
        for expected in 0..<60 {
            #expect(queue.popFirst() == expected)
        }
        queue.removeAll { $0 % 2 == 0 }
        #expect(queue.count == 20)
        queue.append(1000)
        #expect(queue.drain() == Array(stride(from: 61, to: 100, by: 2)) + [1000])
        #expect(queue.isEmpty)
        #expect(queue.popFirst() == nil)
    }

    @Test("error descriptions name the code and message")
    func errorDescription() {
        let error = MsgTransRuntimeError(.timeout, "no response before the deadline")
        #expect(error.description == "MsgTransRuntimeError.timeout: no response before the deadline")
    }
}
