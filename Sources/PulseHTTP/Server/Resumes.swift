import Glibc
import Synchronization

/// The resumes of one server's connections that have been claimed in a ``ResponseSlot`` and not
/// returned yet.
///
/// ``ResponseSlot`` resumes outside its lock, so a shutdown that finds every slot claimed may still
/// race a `MHD_resume_connection` in progress on another thread; it waits here for those before the
/// daemon stops. A resume is counted while its slot's lock is held, and a shutdown reads the count only
/// after it has taken every registered slot's lock (or after the owning thread removed the slot, which
/// it does only once the resume reached it), so the count it sees includes every resume it could race.
final class Resumes: Sendable {
    private let inProgress = Atomic<Int>(0)

    init() {}

    /// A slot's winner is about to resume its connection (called inside the slot's lock).
    func begin() {
        inProgress.add(1, ordering: .relaxed)
    }

    /// That resume has returned.
    func end() {
        inProgress.subtract(1, ordering: .releasing)
    }

    /// Returns once no counted resume is in progress. The window is one `MHD_resume_connection` call,
    /// so the wait yields the processor instead of sleeping.
    func waitUntilDone() {
        while inProgress.load(ordering: .acquiring) > 0 {
            sched_yield()
        }
    }
}
