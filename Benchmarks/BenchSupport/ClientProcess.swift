// The idle-connection benchmarks (ingest-bench idle, msgtrans-scale) hold their client sockets in
// child processes (each below its own open-file limit): the parent starts itself again as
// `<benchmark> --client PORT COUNT` and drives the children line by line, the child answering
// every command with "ok" or "error …".

package import Foundation
package import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

/// One child process holding client sockets, driven through its standard input and output.
package final class ClientProcess {
    /// The child.
    package let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    /// Starts this executable again as `--client port count`.
    package init(port: Int, count: Int) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--client", String(port), String(count)]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// Starts enough children for `connections` sockets, spread evenly over `processes` of them.
    package static func spawn(connections: Int, processes: Int, port: Int) throws -> [ClientProcess] {
        let perProcess = (connections + processes - 1) / processes
        var clients: [ClientProcess] = []
        var assigned = 0
        while assigned < connections {
            let count = min(perProcess, connections - assigned)
            clients.append(try ClientProcess(port: port, count: count))
            assigned += count
        }
        return clients
    }

    /// Sends `command` to every child, then reads their answers in order: the first that is not
    /// "ok" (the rest are not waited for), or `nil` when every child answered "ok".
    package static func command(_ clients: [ClientProcess], _ command: String) -> String? {
        for client in clients { client.send(command) }
        for client in clients {
            let answer = client.awaitAnswer()
            guard answer == "ok" else { return answer }
        }
        return nil
    }

    /// Writes one command line to the child.
    package func send(_ command: String) {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
    }

    /// Waits for the child's answer to the last command (blocking; the parent has nothing else to do).
    package func awaitAnswer() -> String {
        var line: [UInt8] = []
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first else { return "eof" }
            if first == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(first)
        }
    }

    /// Closes the child's input (it closes its sockets and exits) and waits for it.
    package func finish() {
        input.fileHandleForWriting.closeFile()
        process.waitUntilExit()
    }
}

/// The child side's entry: when ``ClientProcess`` started this executable (`--client PORT COUNT`,
/// parsed into `parsed`), runs `runClient(port, count)` and exits with its status; otherwise returns.
/// A `--client` without a port and a count is a usage error.
package func exitIfClient(
    _ parsed: ParsedArguments, usage: String, _ runClient: (_ port: Int, _ count: Int) -> Int32
) {
    guard parsed.isSet("--client") else { return }
    guard parsed.positional.count == 2, let port = Int(parsed.positional[0]), let count = Int(parsed.positional[1])
    else { FlagParser.exitWithUsageError("--client takes PORT COUNT", usage: usage) }
    exit(runClient(port, count))
}

/// The child side's command loop: raises the open-file limit, then answers every command line on
/// standard input with "ok" or, ending the child with status 1, an error. `opens` opens `count`
/// loopback connections to `port`; every other command goes to `handle` with the connections
/// open so far, which returns `nil` for "ok" or the error to answer. The connections are closed
/// when the parent closes the input.
package func runClientCommands(
    port: Int, count: Int, noDelay: Bool, opens: String,
    _ handle: (_ command: String, _ sockets: [Int32]) -> String?
) -> Int32 {
    _ = raiseOpenFileLimit()
    var sockets: [Int32] = []
    sockets.reserveCapacity(count)
    while let command = readLine() {
        if command == opens {
            for _ in 0..<count {
                guard let fd = openSocket(port: port, noDelay: noDelay) else {
                    answer("error connect errno \(errno)")
                    return 1
                }
                sockets.append(fd)
            }
        } else if let failure = handle(command, sockets) {
            answer(failure)
            return 1
        }
        answer("ok")
    }
    for fd in sockets { close(fd) }
    return 0
}

/// Writes one unbuffered answer line to the parent (the child side).
package func answer(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// A blocking TCP connection to `127.0.0.1:port`, or `nil` (with `errno` set) when it fails.
package func openSocket(port: Int, noDelay: Bool) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard result == 0 else {
        let failure = errno
        close(fd)
        errno = failure
        return nil
    }
    if noDelay {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }
    return fd
}
