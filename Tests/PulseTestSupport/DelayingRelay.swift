import Dispatch
import Foundation
import Glibc
import Synchronization

/// A TCP relay on loopback in front of a real server: it accepts a connection, waits `delay` before
/// connecting to the upstream, then copies bytes both ways and records what the client sent. Tests use it
/// to keep a request in flight while something else happens (a sender is killed), and to read what a
/// process outside the test put on the wire.
package final class DelayingRelay: Sendable {
    /// The port clients connect to.
    package let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    private let delay: Duration
    private let state = Mutex((sent: [[UInt8]](), finished: 0, stopped: false))

    /// Starts relaying to `127.0.0.1:upstreamPort`.
    package init(upstreamPort: Int, delay: Duration) throws {
        guard let listener = LoopbackListener() else { throw TestClientError("cannot listen: errno \(errno)") }
        self.listener = listener.descriptor
        self.port = listener.port
        self.upstreamPort = upstreamPort
        self.delay = delay
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    /// The bytes each client sent (one entry per connection, in accept order), so far.
    package var sent: [[UInt8]] { state.withLock { $0.sent } }
    /// Connections whose both directions ended.
    package var finishedConnections: Int { state.withLock { $0.finished } }

    /// Stops accepting.
    package func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        if first {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
    }

    private func acceptLoop() {
        acceptConnections(on: listener) { client in
            let index = state.withLock { state -> Int in
                state.sent.append([])
                return state.sent.count - 1
            }
            let thread = Thread { [self] in relay(client, index: index) }
            thread.start()
            return true
        }
    }

    private func relay(_ client: Int32, index: Int) {
        // A sleep: the delay before connecting upstream is the relay's behaviour (the request stays in flight).
        Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
        guard let upstream = connectToLoopback(port: upstreamPort) else {
            close(client)
            return
        }
        let answered = DispatchSemaphore(value: 0)
        let back = Thread { [self] in
            pump(from: upstream, to: client, record: nil)
            answered.signal()
        }
        back.start()
        pump(from: client, to: upstream, record: index)
        // Wait for the answer direction to finish before closing both.
        answered.wait()
        close(client)
        close(upstream)
        state.withLock { $0.finished += 1 }
    }

    private func pump(from source: Int32, to destination: Int32, record: Int?) {
        while let chunk = readSome(source) {
            if let record {
                state.withLock { $0.sent[record].append(contentsOf: chunk) }
            }
            writeAll(destination, chunk)
        }
        shutdown(destination, Int32(SHUT_WR))
    }
}
