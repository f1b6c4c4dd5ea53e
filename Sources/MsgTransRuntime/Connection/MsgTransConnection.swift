import CLinuxEvents
package import MsgTrans
import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

/// A full-duplex msgtrans connection over TCP, the same type on the client and the server side.
///
/// Either side may send requests (``request(bizType:payload:compression:timeout:)``) and one-way
/// messages (``send(bizType:payload:compression:)``) at any time, while the peer's requests go to
/// the connection's ``MsgTransConnectionDelegate``.
///
/// ## Threading
///
/// The socket belongs to an event loop thread: reading, decoding, completing requests with their
/// responses, admission and writing all happen there and never wait for a handler. Handlers run
/// on Swift tasks, so a handler may itself call ``request(bizType:payload:compression:timeout:)``
/// on the same connection (a reverse request) without deadlock.
///
/// ## Request completion
///
/// A request is registered as in flight on the loop before its bytes can be written. Its
/// response, its timeout, cancellation of the awaiting task and the connection closing race to
/// exactly one completion. Responses are matched by message id; a response that matches nothing
/// is counted in ``MsgTransStatistics/Snapshot/unmatchedResponses`` and dropped, and one whose
/// biz type differs from the request's is accepted and counted.
package final class MsgTransConnection: @unchecked Sendable {
    // Thread-safety: `let` properties and `closed` are safe from any thread. Every `var`
    // below `closed` belongs to the event loop thread (see ConnectionIO.swift).

    /// The event loop serving this connection.
    package let eventLoop: MsgTransEventLoop
    /// This side's address, such as `"127.0.0.1:50123"` or `"[::1]:50123"`.
    package let localAddress: String
    /// The peer's address.
    package let remoteAddress: String
    /// The counters this connection reports to (shared by all connections of a server).
    package let statistics: MsgTransStatistics

    let configuration: MsgTransConfiguration
    let fd: Int32

    /// Why the connection closed, set once.
    private let closed = OnceValue<MsgTransRuntimeError>()

    // Loop thread.
    var registration: UInt64 = 0
    var delegate: (any MsgTransConnectionDelegate)?
    var onClose: ((MsgTransConnection) -> Void)?
    var phase = Phase.open
    var inputEnded = false
    var decoder: FrameDecoder
    var output: [UInt8] = []
    var outputOffset = 0
    var interest: UInt32 = 0
    var flushScheduled = false
    var requestIDs = MessageIDAllocator()
    var oneWayIDs = MessageIDAllocator()
    var inFlight: [UInt32: OutboundRequest] = [:]
    var waitingRequests = FIFO<OutboundRequest>() {
        didSet {
            let change = waitingRequests.count - accountedWaitingRequests
            if change != 0 {
                statistics.add(.waitingRequests, change)
                accountedWaitingRequests = waitingRequests.count
            }
        }
    }
    /// This connection's share of ``MsgTransStatistics/Snapshot/waitingRequests``.
    var accountedWaitingRequests = 0
    /// Whether this connection counts in ``MsgTransStatistics/Snapshot/backPressuredConnections``:
    /// not reading, its outbound buffer full and the last write refused (`EAGAIN`).
    var backPressured = false
    /// Whether the last write stopped because the socket took no more.
    var writeBlocked = false
    var activeInbound = 0
    var heldFrames = FIFO<Frame>()
    var admissionHeld = false
    var lingerTimer: TimerID?
    /// Closes a server connection that is not established in time (see ``markEstablished()``).
    var establishTimer: TimerID?
    /// The server's cap on buffered partial-frame bytes, or `nil` (client connections).
    var partialFrameCap: Int?
    /// This connection's share of ``MsgTransStatistics/Snapshot/partialFrameBytes``.
    var accountedPartialBytes = 0

    enum Phase {
        /// Reading and admitting.
        case open
        /// Graceful close: new inbound messages are refused, running handlers finish.
        case draining
        case closed
    }

    init(
        fd: Int32, eventLoop: MsgTransEventLoop, configuration: MsgTransConfiguration,
        statistics: MsgTransStatistics
    ) {
        self.fd = fd
        self.eventLoop = eventLoop
        self.configuration = configuration
        self.statistics = statistics
        self.localAddress = Socket.localAddress(fd)?.description ?? "?"
        self.remoteAddress = Socket.peerAddress(fd)?.description ?? "?"
        self.decoder = FrameDecoder(limits: configuration.frameLimits)
    }

    // MARK: - Connecting

    /// Opens a client connection to `host:port`.
    ///
    /// `host` is a numeric IPv4 or IPv6 address (brackets allowed) or a name; names are resolved
    /// off the cooperative thread pool and each address is tried in turn. The whole attempt is
    /// bounded by ``MsgTransConfiguration/connectTimeout`` and by cancellation of the calling task.
    ///
    /// - Parameters:
    ///   - delegate: handles the server's requests to this side; without one, every inbound
    ///     request is answered by ``MsgTransConfiguration/failureResponder``.
    ///   - statistics: counters to report to; a fresh set by default.
    ///   - loop: the loop serving the connection.
    package static func connect(
        host: String, port: Int, configuration: MsgTransConfiguration = MsgTransConfiguration(),
        delegate: (any MsgTransConnectionDelegate)? = nil, statistics: MsgTransStatistics = MsgTransStatistics(),
        on loop: MsgTransEventLoop = .shared
    ) async throws(MsgTransRuntimeError) -> MsgTransConnection {
        guard let port = UInt16(exactly: port) else {
            throw MsgTransRuntimeError(.invalidAddress, "port \(port) is out of range")
        }
        let deadline = loop.deadline(after: configuration.connectTimeout)
        let addresses = try await Resolver.resolve(host: host, port: port)
        var lastError = MsgTransRuntimeError(.connectFailed, "no address to connect to")
        for address in addresses {
            if Task.isCancelled {
                throw MsgTransRuntimeError(.cancelled, "connect cancelled")
            }
            let connector = Connector(
                address: address, deadline: deadline, loop: loop, configuration: configuration,
                delegate: delegate, statistics: statistics)
            do {
                return try await connector.run()
            } catch {
                lastError = error
                if error.code == .timeout || error.code == .cancelled {
                    throw error
                }
            }
        }
        throw lastError
    }

    // MARK: - Sending

    /// Sends a request and returns the peer's response.
    ///
    /// Waits (first come, first served) while ``MsgTransConfiguration/maxOutstandingRequests`` of
    /// this connection's requests await responses or the outbound buffer is full; that wait
    /// counts against the timeout.
    ///
    /// - Parameters:
    ///   - bizType: the application operation code; echoed by the peer.
    ///   - payload: the plaintext payload.
    ///   - compression: the preferred compression, applied from the policy's size threshold on.
    ///   - timeout: the deadline for the response; ``MsgTransConfiguration/requestTimeout`` if `nil`.
    /// - Returns: the response with its payload decompressed.
    /// - Throws: ``MsgTransRuntimeError`` with code ``MsgTransRuntimeError/Code/timeout``,
    ///   ``MsgTransRuntimeError/Code/cancelled``, the close reason
    ///   (``MsgTransRuntimeError/Code/connectionClosed``, ``MsgTransRuntimeError/Code/protocolViolation``),
    ///   ``MsgTransRuntimeError/Code/encodingFailed`` or ``MsgTransRuntimeError/Code/malformedPayload``
    ///   (the response's payload could not be decompressed; the connection stays open).
    package func request(
        bizType: UInt8, payload: [UInt8], compression: Compression = .none, timeout: Duration? = nil
    ) async throws(MsgTransRuntimeError) -> MsgTransMessage {
        if let reason = closeReason {
            throw reason
        }
        let frame = try Self.makeFrame(
            .request, bizType: bizType, payload: payload, compression: compression,
            policy: configuration.compressionPolicy)
        return try await perform(frame, timeout: timeout)
    }

    /// Sends a request whose payload is already in wire form and returns the peer's response.
    ///
    /// `wirePayload` goes into the frame exactly as given, labelled `compression`: nothing is
    /// compressed here, so a retry of the same stored bytes puts identical bytes on the wire. The
    /// caller vouches that `wirePayload` is a valid stream of `compression` (``PayloadCompressor``
    /// produces one). Waits, times out and fails like ``request(bizType:payload:compression:timeout:)``.
    ///
    /// To keep several requests in flight in FIFO order without a task per request, see
    /// ``submit(bizType:wirePayload:compression:timeout:completion:)``.
    ///
    /// - Throws: the errors of ``request(bizType:payload:compression:timeout:)``;
    ///   ``MsgTransRuntimeError/Code/encodingFailed`` when the payload does not fit `payload_len`.
    package func request(
        bizType: UInt8, wirePayload: [UInt8], compression: Compression, timeout: Duration? = nil
    ) async throws(MsgTransRuntimeError) -> MsgTransMessage {
        if let reason = closeReason {
            throw reason
        }
        guard UInt64(wirePayload.count) <= UInt64(UInt32.max) else {
            throw MsgTransRuntimeError(.encodingFailed, "payload of biz_type \(bizType) does not fit payload_len")
        }
        let frame = Frame(
            compression: compression, packetType: .request, bizType: bizType, messageID: 0, payload: wirePayload)
        return try await perform(frame, timeout: timeout)
    }

    /// Hands a request whose payload is already in wire form to the connection without waiting
    /// for it: `completion` runs exactly once with the response (payload decompressed) or the
    /// failure, on the event loop thread (on the caller's thread when the loop has stopped).
    ///
    /// Requests submitted one after another — from any thread, including from the completion of an
    /// earlier request on the loop thread — go on the wire in submission order, and several
    /// submitted within one loop iteration leave in one socket write. A completion that submits the
    /// next request keeps a window of requests in flight without any thread hand-off: the loop
    /// thread reads the answer, runs the completion and writes the next request. The completion
    /// must be short and must not block (it runs on the loop thread). Fails, times out and is
    /// refused like ``request(bizType:wirePayload:compression:timeout:)``; there is no
    /// cancellation.
    package func submit(
        bizType: UInt8, wirePayload: [UInt8], compression: Compression, timeout: Duration? = nil,
        completion: @escaping @Sendable (Result<MsgTransMessage, MsgTransRuntimeError>) -> Void
    ) {
        guard UInt64(wirePayload.count) <= UInt64(UInt32.max) else {
            completion(
                .failure(
                    MsgTransRuntimeError(.encodingFailed, "payload of biz_type \(bizType) does not fit payload_len")))
            return
        }
        let frame = Frame(
            compression: compression, packetType: .request, bizType: bizType, messageID: 0, payload: wirePayload)
        let request = OutboundRequest(
            frame: frame, deadline: eventLoop.deadline(after: timeout ?? configuration.requestTimeout))
        let limits = configuration.frameLimits
        request.promise.install { result in
            completion(
                result.flatMap { response in
                    do {
                        return .success(
                            MsgTransMessage(header: response.header, payload: try response.plaintext(limits: limits)))
                    } catch {
                        return .failure(
                            MsgTransRuntimeError(
                                .malformedPayload,
                                "response to biz_type \(bizType) id \(response.messageID) cannot be decompressed",
                                underlying: error))
                    }
                })
        }
        // Through the loop's job queue even on the loop thread, so that submissions from several
        // threads keep their order.
        if !eventLoop.execute({ self.submit(request) }) {
            request.promise.complete(.failure(closeReason ?? Self.loopStopped))
        }
    }

    private func perform(_ frame: Frame, timeout: Duration?) async throws(MsgTransRuntimeError) -> MsgTransMessage {
        let bizType = frame.bizType
        let deadline = eventLoop.deadline(after: timeout ?? configuration.requestTimeout)
        let request = OutboundRequest(frame: frame, deadline: deadline)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard request.promise.install(continuation) else { return }
                let submitted = eventLoop.execute { self.submit(request) }
                if !submitted {
                    request.promise.complete(.failure(self.closeReason ?? Self.loopStopped))
                }
            }
        } onCancel: {
            if request.promise.complete(.failure(MsgTransRuntimeError(.cancelled, "request cancelled"))) {
                eventLoop.execute { self.abandon(request) }
            }
        }
        let response = try result.get()
        do {
            let plaintext = try response.plaintext(limits: configuration.frameLimits)
            return MsgTransMessage(header: response.header, payload: plaintext)
        } catch {
            throw MsgTransRuntimeError(
                .malformedPayload, "response to biz_type \(bizType) id \(response.messageID) cannot be decompressed",
                underlying: error)
        }
    }

    /// Queues a one-way message (a lossy notification; the peer sends no response).
    ///
    /// Returns once the frame is queued for the socket, not when the peer has it.
    ///
    /// - Throws: ``MsgTransRuntimeError/Code/overloaded`` when the outbound buffer is full, the
    ///   close reason when the connection is closed, ``MsgTransRuntimeError/Code/encodingFailed``.
    package func send(bizType: UInt8, payload: [UInt8], compression: Compression = .none)
        async throws(MsgTransRuntimeError)
    {
        if let reason = closeReason {
            throw reason
        }
        let frame = try Self.makeFrame(
            .oneWay, bizType: bizType, payload: payload, compression: compression,
            policy: configuration.compressionPolicy)
        let promise = OneShot<Result<Void, MsgTransRuntimeError>>()
        let result = await withCheckedContinuation { continuation in
            guard promise.install(continuation) else { return }
            let submitted = eventLoop.execute { self.submitOneWay(frame, promise: promise) }
            if !submitted {
                promise.complete(.failure(self.closeReason ?? Self.loopStopped))
            }
        }
        try result.get()
    }

    // MARK: - Establishing

    /// Tells the server side that the application's handshake succeeded on this connection, so
    /// ``MsgTransServerConfiguration/establishTimeout`` no longer applies. Safe from any thread;
    /// does nothing on a client connection or when called again.
    package func markEstablished() {
        eventLoop.execute {
            guard let timer = self.establishTimer else { return }
            self.eventLoop.cancelTimer(timer)
            self.establishTimer = nil
        }
    }

    // MARK: - Closing

    /// Whether the connection has closed.
    package var isClosed: Bool { closeReason != nil }

    /// Why the connection closed, or `nil` while it is open.
    package var closeReason: MsgTransRuntimeError? {
        closed.value
    }

    /// Closes the connection: pending requests fail with ``MsgTransRuntimeError/Code/connectionClosed``,
    /// queued output is written if the socket accepts it at once, handlers still running have
    /// their answers discarded. Returns when closed.
    package func close() async {
        eventLoop.execute {
            self.teardown(MsgTransRuntimeError(.connectionClosed, "connection closed locally"), flush: true)
        }
        _ = await waitUntilClosed()
    }

    /// Suspends until the connection has closed and returns the reason.
    package func waitUntilClosed() async -> MsgTransRuntimeError {
        await closed.wait()
    }

    /// Records the close reason and wakes everyone waiting for it (loop thread, once).
    func publishClose(_ reason: MsgTransRuntimeError) {
        closed.set(reason)
    }

    static let loopStopped = MsgTransRuntimeError(.connectionClosed, "the event loop has stopped")

    static func makeFrame(
        _ packetType: PacketType, bizType: UInt8, payload: [UInt8], compression: Compression,
        policy: CompressionPolicy
    ) throws(MsgTransRuntimeError) -> Frame {
        do {
            return try Frame.make(
                packetType: packetType, bizType: bizType, messageID: 0, plaintext: payload, preferred: compression,
                policy: policy)
        } catch {
            throw MsgTransRuntimeError(.encodingFailed, "cannot frame biz_type \(bizType)", underlying: error)
        }
    }
}
