import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where the command line writes: standard output and standard error, injectable for tests.
package struct CommandLineOutput: Sendable {
    /// Writes to standard output.
    package var standardOutput: @Sendable (String) -> Void
    /// Writes to standard error.
    package var standardError: @Sendable (String) -> Void
    /// Writes that could not be delivered so far (counted by the process's streams; `0` for sinks
    /// that cannot fail). `pulsegate serve` reports it as `pulsegate_log_lines_dropped_total`.
    package var droppedWrites: @Sendable () -> Int

    /// Creates an output from two sinks.
    package init(
        standardOutput: @escaping @Sendable (String) -> Void,
        standardError: @escaping @Sendable (String) -> Void,
        droppedWrites: @escaping @Sendable () -> Int = { 0 }
    ) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.droppedWrites = droppedWrites
    }

    /// The process's standard output and standard error, written with `write(2)`: a write that
    /// fails (a full disk, `/dev/full`, a pipe whose reader exited) drops that text and counts it
    /// instead of stopping the process.
    package static func processStreams() -> CommandLineOutput {
        let output = StandardStreamWriter(descriptor: STDOUT_FILENO)
        let error = StandardStreamWriter(descriptor: STDERR_FILENO)
        return CommandLineOutput(
            standardOutput: { output.write($0) }, standardError: { error.write($0) },
            droppedWrites: { output.dropped + error.dropped })
    }
}

/// One standard stream written with `write(2)`, whole texts at a time.
///
/// `FileHandle.write` traps when the write fails; this writer retries on `EINTR`, waits for a
/// non-blocking descriptor on `EAGAIN` (up to ``defaultStallLimitMilliseconds`` without progress), and
/// otherwise drops the rest of the text and counts it in ``dropped``. With `SIGPIPE` ignored
/// (``PulseGateCommandLine/prepareProcess()``) a closed pipe is an `EPIPE` error like any other.
final class StandardStreamWriter: Sendable {
    /// How long a write waits for a non-blocking descriptor to accept more bytes before the text
    /// is dropped.
    static let defaultStallLimitMilliseconds: Int32 = 1_000

    private let descriptor: Int32
    private let stallLimitMilliseconds: Int32
    /// Serializes writers so that texts (log lines) are not interleaved; holds the drop count.
    private let state = Mutex(0)

    init(descriptor: Int32, stallLimitMilliseconds: Int32 = defaultStallLimitMilliseconds) {
        self.descriptor = descriptor
        self.stallLimitMilliseconds = stallLimitMilliseconds
    }

    /// Texts (lines) dropped so far.
    var dropped: Int { state.withLock { $0 } }

    /// Writes all of `text`; returns whether it was written (otherwise it was counted as dropped).
    @discardableResult
    func write(_ text: String) -> Bool {
        var bytes = Array(text.utf8)
        return state.withLock { dropped in
            let written = bytes.withUnsafeMutableBytes {
                Self.writeAll(descriptor, $0, stallLimitMilliseconds: stallLimitMilliseconds)
            }
            if !written { dropped += 1 }
            return written
        }
    }

    private static func writeAll(
        _ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer, stallLimitMilliseconds: Int32
    ) -> Bool {
        guard let base = buffer.baseAddress else { return true }
        var offset = 0
        while offset < buffer.count {
            let count = Glibc.write(descriptor, base + offset, buffer.count - offset)
            if count > 0 {
                offset += count
                continue
            }
            let number = count < 0 ? errno : 0
            if number == EINTR { continue }
            guard number == EAGAIN || number == EWOULDBLOCK else { return false }
            var poll = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let ready = Glibc.poll(&poll, 1, stallLimitMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return false }
        }
        return true
    }
}
