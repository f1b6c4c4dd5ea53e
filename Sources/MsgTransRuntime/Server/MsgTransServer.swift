/// A msgtrans TCP server: one listening socket and its connections, all served by one event loop.
///
/// ```swift
/// let server = try await MsgTransServer.start(host: "127.0.0.1", port: 0) { _ in
///     MsgTransRequestHandler { request, _ in MsgTransReply(request.payload) }
/// }
/// print(server.port)
/// await server.shutdown()
/// ```
///
/// The lifecycle is `start` → (``run()`` or other work) → ``shutdown()``. Shutdown stops
/// accepting, refuses new inbound requests with the overload reply, waits up to
/// ``MsgTransServerConfiguration/shutdownGracePeriod`` for running handlers to answer and for
/// output to flush, then closes every connection.

import PulseKit

package final class MsgTransServer: Sendable {
    /// The bound port (useful when started with port 0).
    package let port: Int
    /// The bound address, such as `"127.0.0.1:6000"` or `"[::1]:6000"`.
    package let localAddress: String
    /// Counters of all connections of this server.
    package let statistics: MsgTransStatistics
    /// The loop serving the listener and every connection.
    package let eventLoop: MsgTransEventLoop

    private let listener: Listener
    private let ownsLoop: Bool

    private init(listener: Listener, port: Int, localAddress: String, ownsLoop: Bool) {
        self.listener = listener
        self.port = port
        self.localAddress = localAddress
        self.statistics = listener.statistics
        self.eventLoop = listener.loop
        self.ownsLoop = ownsLoop
    }

    /// Binds `host:port` and starts accepting connections.
    ///
    /// - Parameters:
    ///   - host: a numeric IPv4 or IPv6 address (`"127.0.0.1"`, `"::1"`, `"0.0.0.0"`, `"::"`) or a name.
    ///   - port: the TCP port, or 0 for any free port (see ``port``).
    ///   - loop: the loop to serve on; by default the server starts a loop of its own and stops
    ///     it at shutdown.
    ///   - makeDelegate: creates the delegate of each accepted connection. Runs on the event loop
    ///     thread: it must be fast.
    /// - Throws: ``MsgTransRuntimeError/Code/invalidAddress`` or ``MsgTransRuntimeError/Code/systemCallFailed``
    ///   (for example when the port is in use).
    package static func start(
        host: String, port: Int, configuration: MsgTransServerConfiguration = MsgTransServerConfiguration(),
        on loop: MsgTransEventLoop? = nil,
        makeDelegate: @escaping @Sendable (MsgTransConnection) -> any MsgTransConnectionDelegate
    ) async throws(MsgTransRuntimeError) -> MsgTransServer {
        guard let port = UInt16(exactly: port) else {
            throw MsgTransRuntimeError(.invalidAddress, "port \(port) is out of range")
        }
        let addresses = try await Resolver.resolve(host: host, port: port)
        let serving: MsgTransEventLoop
        if let loop {
            serving = loop
        } else {
            serving = try MsgTransEventLoop(name: "msgtrans-server", clock: configuration.clock)
        }
        let fd: Int32
        do {
            fd = try Socket.listen(on: addresses[0], backlog: configuration.listenBacklog)
        } catch {
            if loop == nil {
                await serving.shutdown()
            }
            throw error
        }
        let bound = Socket.localAddress(fd)
        let listener = Listener(
            fd: fd, loop: serving, configuration: configuration, statistics: MsgTransStatistics(),
            makeDelegate: makeDelegate)
        do {
            try await listener.activate()
        } catch {
            if loop == nil {
                await serving.shutdown()
            }
            throw error
        }
        return MsgTransServer(
            listener: listener, port: bound?.port ?? Int(port), localAddress: bound?.description ?? host,
            ownsLoop: loop == nil)
    }

    /// Suspends until the server has shut down. If the calling task is cancelled, shuts the
    /// server down gracefully first.
    package func run() async {
        await withTaskCancellationHandler {
            await listener.waitUntilStopped()
        } onCancel: {
            Task { await self.shutdown() }
        }
    }

    /// Shuts down gracefully (see the type's documentation) and returns when every connection is
    /// closed. Calling it again waits for the same shutdown.
    package func shutdown() async {
        listener.beginShutdown()
        await listener.waitUntilStopped()
        if ownsLoop {
            await eventLoop.shutdown()
        }
    }
}
