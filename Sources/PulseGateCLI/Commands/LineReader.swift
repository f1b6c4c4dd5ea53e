import Dispatch
import Foundation

/// Reads lines from a file descriptor on a dedicated thread (a blocking `read` must not hold a thread of
/// Swift's cooperative pool) and delivers them as an async sequence of byte arrays without terminators.
///
/// At most ``window`` lines are read ahead of the consumer, which calls ``consumed()`` after each line.
final class LineReader: Sendable {
    /// Lines read ahead of the consumer at most.
    static let window = 1_024

    private let descriptor: Int32
    private let closesDescriptor: Bool
    private let permits = DispatchSemaphore(value: LineReader.window)

    init(descriptor: Int32, closesDescriptor: Bool) {
        self.descriptor = descriptor
        self.closesDescriptor = closesDescriptor
    }

    /// Frees room for one more line to be read ahead.
    func consumed() {
        permits.signal()
    }

    /// The lines; a final line without a newline is delivered too. Reading stops at end of file or on error.
    func lines() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .unbounded)
        let thread = Thread { [self] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                var start = 0
                for index in 0..<count where buffer[index] == 0x0A {
                    pending.append(contentsOf: buffer[start..<index])
                    permits.wait()
                    continuation.yield(pending)
                    pending.removeAll(keepingCapacity: true)
                    start = index + 1
                }
                pending.append(contentsOf: buffer[start..<count])
            }
            if !pending.isEmpty {
                permits.wait()
                continuation.yield(pending)
            }
            if closesDescriptor {
                close(descriptor)
            }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}
