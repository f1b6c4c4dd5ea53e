import Foundation
import PulseKit
import Synchronization
import Testing

@Suite("GroupCommitStatistics and DedicatedThread")
struct GroupCommitStatisticsTests {
    @Test("a committed group counts one commit, its size in the right bucket and the jobs' outcomes")
    func committedGroup() {
        var statistics = GroupCommitStatistics()
        statistics.recordGroup(committed: 2, failed: 1, groupSize: 3, didCommit: true)
        statistics.recordGroup(committed: 1, failed: 0, groupSize: 1, didCommit: true)
        #expect(statistics.commits == 2)
        #expect(statistics.groupCommits == 2)
        #expect(statistics.groupCommittedJobs == 3)
        #expect(statistics.groupFailedJobs == 1)
        #expect(statistics.largestGroupCommit == 3)
        #expect(statistics.groupSizeSum == 4)
        // Bounds 1, 2, 4, …: a group of 1 is in bucket 0, a group of 3 in bucket 2 (more than 2, at most 4).
        var expected = [Int](repeating: 0, count: GroupCommitStatistics.groupSizeBounds.count + 1)
        expected[0] = 1
        expected[2] = 1
        #expect(statistics.groupSizeCounts == expected)
    }

    @Test("a group that did not commit counts only its failed jobs; one above the last bound, the last bucket")
    func failedAndLargeGroups() {
        var statistics = GroupCommitStatistics()
        statistics.recordGroup(committed: 0, failed: 4, groupSize: 4, didCommit: false)
        #expect(statistics.commits == 0)
        #expect(statistics.groupCommits == 0)
        #expect(statistics.groupFailedJobs == 4)
        #expect(statistics.groupSizeSum == 0)
        #expect(statistics.groupSizeCounts.allSatisfy { $0 == 0 })
        statistics.recordGroup(committed: 600, failed: 0, groupSize: 600, didCommit: true)
        #expect(statistics.groupSizeCounts.last == 1)
        #expect(statistics.largestGroupCommit == 600)
    }

    @Test("DedicatedThread runs the body on a new thread that carries the name")
    func dedicatedThread() async {
        let seen = Mutex<(name: String?, isMain: Bool)?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DedicatedThread.start(name: "pulse.kit-test") {
                seen.withLock { $0 = (Thread.current.name, Thread.isMainThread) }
                continuation.resume()
            }
        }
        let observed = seen.withLock { $0 }
        #expect(observed?.name == "pulse.kit-test")
        #expect(observed?.isMain == false)
    }
}
