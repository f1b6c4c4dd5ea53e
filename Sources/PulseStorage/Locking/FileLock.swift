import PulseKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive, non-blocking `flock` on a file, released when the holder releases it, closes it or
/// exits (even by `kill -9`, since the kernel drops the lock with the descriptor).
///
/// Two opens of the same file conflict even inside one process, so a second holder in the same
/// process is refused too.
package final class FileLock: Sendable {
    /// The lock file `pulsegate serve` and `pulsegate ingest` hold in their data directory.
    package static let dataDirectoryFileName = "pulsegate.lock"

    private let descriptor: Mutex<Int32>

    /// Takes the lock, or returns `nil` if another holder has it (or the file cannot be opened).
    package convenience init?(path: String) {
        guard case .success(let descriptor) = Self.take(path) else { return nil }
        self.init(descriptor: descriptor)
    }

    private init(descriptor: Int32) {
        self.descriptor = Mutex(descriptor)
    }

    /// Takes the lock of a data directory (``dataDirectoryFileName`` inside it, created if needed)
    /// for as long as the returned lock lives, and writes this process's id into the file so that
    /// a refused process can name the holder.
    ///
    /// - Throws: ``StorageError`` with code ``StorageError/Code/inUse`` naming the directory and,
    ///   when known, the holder's process id; ``StorageError/Code/cannotOpen`` when the lock file
    ///   cannot be created.
    package static func lockDataDirectory(_ directory: String) throws(StorageError) -> FileLock {
        let path =
            directory.hasSuffix("/") ? directory + dataDirectoryFileName : directory + "/" + dataDirectoryFileName
        switch take(path) {
        case .success(let descriptor):
            let text = Array("\(getpid())\n".utf8)
            if ftruncate(descriptor, 0) == 0 {
                _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            }
            return FileLock(descriptor: descriptor)
        case .failure(let failure):
            if failure.held {
                let holder = holderProcessID(path).map { " (pid \($0))" } ?? ""
                throw StorageError(
                    .inUse,
                    "the data directory \(directory) is in use by another process\(holder): "
                        + "it holds \(dataDirectoryFileName); stop that process or use another data directory")
            }
            throw StorageError(
                .cannotOpen,
                "cannot open the lock file \(path): \(String(cString: strerror(failure.errorNumber)))")
        }
    }

    /// Releases the lock (also done when the lock is deallocated). Calling it again does nothing.
    package func release() {
        let released = descriptor.withLock { descriptor -> Int32 in
            defer { descriptor = -1 }
            return descriptor
        }
        guard released >= 0 else { return }
        flock(released, LOCK_UN)
        close(released)
    }

    deinit {
        release()
    }

    private struct Failure: Error {
        /// Another holder has the lock (as opposed to the file not opening).
        var held: Bool
        var errorNumber: Int32
    }

    private static func take(_ path: String) -> Result<Int32, Failure> {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return .failure(Failure(held: false, errorNumber: errno)) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let number = errno
            if number == EINTR { continue }
            close(descriptor)
            return .failure(Failure(held: number == EWOULDBLOCK, errorNumber: number))
        }
        return .success(descriptor)
    }

    /// The process id the holder wrote into the lock file, if readable.
    private static func holderProcessID(_ path: String) -> Int32? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        return Int32(text.split(separator: "\n").first ?? "")
    }
}
