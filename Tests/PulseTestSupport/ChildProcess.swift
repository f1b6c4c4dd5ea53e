package import Foundation
import Synchronization

/// The path of the built `pulsegate` executable (next to the test bundle in `.build/<config>`),
/// or `nil` when it has not been built.
package func builtPulsegateExecutable() -> String? {
    builtExecutable("pulsegate")
}

/// The path of the package's built executable `name` (next to the test bundle in `.build/<config>`),
/// or `nil` when it has not been built.
package func builtExecutable(_ name: String) -> String? {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        directory = directory.deletingLastPathComponent()
    }
    let fallback = Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name).path
    return FileManager.default.isExecutableFile(atPath: fallback) ? fallback : nil
}

/// Waits for a child process to exit without blocking a thread of the cooperative pool.
package func waitForChildExit(_ process: Process) async {
    _ = await eventually(within: .seconds(600)) { !process.isRunning }
    process.waitUntilExit()  // returns at once (or blocks past the guard); makes the termination status readable
}

/// The lines a child writes to a pipe, collected on a thread of their own.
package final class ChildOutputLines: Sendable {
    private let lines = Mutex<[String]>([])
    /// Opened when the pipe reaches end of file.
    private let end = Gate()

    /// Starts reading `handle` until end of file.
    package init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            let descriptor = handle.fileDescriptor
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[0..<newline], as: UTF8.self)
                    pending.removeFirst(newline + 1)
                    lines.withLock { $0.append(line) }
                }
            }
            end.open()
        }
        thread.start()
    }

    /// The complete lines read so far.
    package var all: [String] { lines.withLock { $0 } }

    /// Whether the child closed the pipe.
    package var isFinished: Bool { end.isOpen }

    /// Returns when the child has closed the pipe (the reading thread signals it).
    package func waitForEnd() async { await end.wait() }
}
