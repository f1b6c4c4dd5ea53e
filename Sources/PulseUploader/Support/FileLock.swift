#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive, non-blocking `flock` on a file, released when the holder closes it or exits (even by
/// `kill -9`, since the kernel drops the lock with the descriptor).
final class FileLock {
    private var descriptor: Int32

    /// Takes the lock, or returns `nil` if another process holds it.
    init?(path: String) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit {
        release()
    }
}
