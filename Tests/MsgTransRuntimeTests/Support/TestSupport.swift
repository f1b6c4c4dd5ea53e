import Glibc
import MsgTrans
import PulseTestSupport
import Synchronization

@testable import MsgTransRuntime

/// Runs blocking work (raw socket calls) on a thread of its own, never on the cooperative pool.
func onThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    let promise = OneShot<Value>()
    return await withCheckedContinuation { continuation in
        guard promise.install(continuation) else { return }
        let started = DetachedThread.start { promise.complete(body()) }
        precondition(started == 0, "cannot start a test thread")
    }
}

/// A thread-safe counter with a way to wait until it reaches a value.
final class Tally: Sendable {
    private struct State {
        var value = 0
        var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    var value: Int { state.withLock { $0.value } }

    func increment() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.value += 1
            let value = state.value
            let ready = state.waiters.filter { $0.0 <= value }.map(\.1)
            state.waiters.removeAll { $0.0 <= value }
            return ready
        }
        for waiter in ready {
            waiter.resume()
        }
    }

    func wait(untilAtLeast target: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reached = state.withLock { state in
                if state.value >= target { return true }
                state.waiters.append((target, continuation))
                return false
            }
            if reached {
                continuation.resume()
            }
        }
    }
}

/// An ordered log of events written from several tasks.
final class EventLog: Sendable {
    private let entries = Mutex<[String]>([])

    func record(_ entry: String) {
        entries.withLock { $0.append(entry) }
    }

    var all: [String] { entries.withLock { $0 } }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A blocking TCP socket for playing a hand-written peer.
final class RawSocket: @unchecked Sendable {
    let fd: Int32
    private var decoder = FrameDecoder()

    init(fd: Int32) {
        self.fd = fd
        configureTestSocket(fd)
    }

    deinit {
        Glibc.close(fd)
    }

    /// Connects (blocking) to a numeric host.
    static func connect(host: String, port: Int) async -> RawSocket {
        await onThread {
            guard let fd = connectToLoopback(host: host, port: port) else {
                preconditionFailure("raw connect failed: errno \(errno)")
            }
            return RawSocket(fd: fd)
        }
    }

    func write(_ bytes: [UInt8]) async {
        _ = await onThread { writeAll(self.fd, bytes) }
    }

    /// Writes each byte with its own system call (each becomes its own TCP segment).
    func dripFeed(_ bytes: [UInt8]) async {
        await onThread {
            for byte in bytes {
                var byte = byte
                _ = Glibc.send(self.fd, &byte, 1, Int32(MSG_NOSIGNAL))
            }
        }
    }

    /// Reads the next frame; `nil` on EOF, error or timeout.
    func readFrame() async -> Frame? {
        await onThread { self.readFrameBlocking() }
    }

    private func readFrameBlocking() -> Frame? {
        while true {
            if let frame = try? decoder.next() { return frame }
            guard let received = readSome(fd, maximum: 4096) else { return nil }
            decoder.append(received)
        }
    }

    /// Reads until EOF and returns every byte received; `nil` if the read failed or timed out
    /// (a reset counts as EOF with no bytes only if nothing was received).
    func readToEnd() async -> [UInt8]? {
        await onThread {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(self.fd, $0.baseAddress, $0.count) }
                if count == 0 { return received }
                if count < 0 { return errno == ECONNRESET ? received : nil }
                received += buffer[0..<count]
            }
        }
    }

    func shutdownWrite() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }
}

/// A blocking listening socket for playing a hand-written server.
final class RawListener: @unchecked Sendable {
    let fd: Int32
    let port: Int

    init(backlog: Int32 = 16) {
        guard let listener = LoopbackListener(backlog: backlog) else {
            preconditionFailure("raw listener cannot listen: errno \(errno)")
        }
        fd = listener.descriptor
        port = listener.port
    }

    deinit {
        Glibc.close(fd)
    }

    func accept() async -> RawSocket {
        await onThread { RawSocket(fd: Glibc.accept(self.fd, nil, nil)) }
    }
}

extension Frame {
    /// A request frame with an uncompressed payload.
    static func request(bizType: UInt8, id: UInt32, _ payload: [UInt8]) -> Frame {
        Frame(packetType: .request, bizType: bizType, messageID: id, payload: payload)
    }
}

/// An echo delegate that counts requests.
struct EchoDelegate: MsgTransConnectionDelegate {
    let calls: Tally

    init(calls: Tally = Tally()) {
        self.calls = calls
    }

    func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async throws -> MsgTransReply {
        calls.increment()
        return MsgTransReply(request.payload)
    }
}

/// Starts a server on 127.0.0.1 (or `host`) with a port chosen by the kernel, on `loop` when given
/// (else on a loop of its own).
func startServer(
    host: String = "127.0.0.1", configuration: MsgTransServerConfiguration = MsgTransServerConfiguration(),
    loop: MsgTransEventLoop? = nil,
    makeDelegate: @escaping @Sendable (MsgTransConnection) -> any MsgTransConnectionDelegate = { _ in EchoDelegate() }
) async throws -> MsgTransServer {
    try await MsgTransServer.start(
        host: host, port: 0, configuration: configuration, on: loop, makeDelegate: makeDelegate)
}

extension MsgTransServer {
    /// A client connected to this server over IPv4 loopback.
    func connectClient() async throws -> MsgTransConnection {
        try await MsgTransConnection.connect(host: "127.0.0.1", port: port)
    }

    /// Closes the test's client, then shuts the server down.
    func shutdown(closing client: MsgTransConnection) async {
        await client.close()
        await shutdown()
    }
}
