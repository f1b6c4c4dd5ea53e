import Foundation
import Glibc
import MsgTrans
import PulseJSON
import PulseTestSupport
import Synchronization

/// A Pulse upstream that speaks msgtrans with plain blocking sockets on threads of its own, so
/// the forwarder is judged against the bytes on the wire: it records every request frame as it
/// arrived (compression byte and payload bytes exactly), answers CONNECT and CONFIG_PULL, and
/// answers uploads as ``decide`` says. Uploads are held until ``holdUploads`` are outstanding on
/// the connection (or 300 ms pass without another frame), then answered in arrival order, so a
/// window of requests is provably in flight at once.
final class RawUpstream: Sendable {
    enum Action: Sendable, Equatable {
        /// `{"code":0,"msg":null,"data":true}`.
        case accept
        /// `{"code":<code>,"msg":"scripted","data":null}`.
        case code(Int)
        /// No answer (the request times out on the client).
        case noAnswer
        /// The connection is closed instead of answering.
        case disconnect
        /// Not answered in this round: it stays outstanding and is decided again in the next
        /// round (when ``holdUploads`` are outstanding again, or 300 ms pass without a frame).
        case later
    }

    struct Received: Sendable {
        var bizType: UInt8
        var compression: MsgTrans.Compression
        /// The frame payload exactly as on the wire.
        var wirePayload: [UInt8]
        /// The connection's serial number (1, 2, … in accept order).
        var connection: Int
        /// For uploads: the Pulse `batchId` inside.
        var batchID: String?
        /// For uploads: how many times this batch id had arrived, this one included.
        var attempt: Int
    }

    private struct State {
        var received: [Received] = []
        var accepted = 0
        var stopped = false
        var peakOutstanding = 0
        var connectionFDs: [Int32] = []
    }

    let port: Int
    private let listenFD: Int32
    private let holdUploads: Int
    private let decide: @Sendable (Received) -> Action
    private let state = Mutex(State())

    private init(listenFD: Int32, port: Int, holdUploads: Int, decide: @escaping @Sendable (Received) -> Action) {
        self.listenFD = listenFD
        self.port = port
        self.holdUploads = holdUploads
        self.decide = decide
    }

    /// Listens on `127.0.0.1` (a free port).
    static func start(holdUploads: Int = 1, decide: @escaping @Sendable (Received) -> Action = { _ in .accept })
        -> RawUpstream
    {
        guard let listener = LoopbackListener() else {
            preconditionFailure("raw upstream cannot listen: errno \(errno)")
        }
        let upstream = RawUpstream(
            listenFD: listener.descriptor, port: listener.port, holdUploads: holdUploads, decide: decide)
        Thread { upstream.acceptLoop() }.start()
        return upstream
    }

    /// Every request frame received so far, in arrival order.
    var received: [Received] { state.withLock { $0.received } }
    /// Uploads (biz 4 and 5) received so far.
    var uploads: [Received] { received.filter { $0.bizType == 4 || $0.bizType == 5 } }
    /// The most uploads outstanding (received, not yet answered) on one connection at once.
    var peakOutstanding: Int { state.withLock { $0.peakOutstanding } }

    func stop() {
        // Connection descriptors are shut down under the lock, and a connection's thread closes
        // its descriptor under the same lock after taking it off the list: a number another test's
        // server reused after that close is never touched.
        let first = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.stopped = true
            for fd in state.connectionFDs { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
            return true
        }
        guard first else { return }
        // The accept thread closes the listening descriptor once its accept fails, so it never
        // accepts on a number that was closed and reused.
        Glibc.shutdown(listenFD, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        acceptConnections(on: listenFD) { fd in
            let serial = state.withLock { state -> Int? in
                if state.stopped { return nil }
                state.accepted += 1
                state.connectionFDs.append(fd)
                return state.accepted
            }
            guard let serial else {
                Glibc.close(fd)
                return false
            }
            Thread { self.serve(fd, serial: serial) }.start()
            return true
        }
        Glibc.close(listenFD)
    }

    private func serve(_ fd: Int32, serial: Int) {
        defer {
            state.withLock { state in
                state.connectionFDs.removeAll { $0 == fd }
                Glibc.close(fd)
            }
        }
        var decoder = FrameDecoder()
        var outstanding: [(Frame, Received)] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while !state.withLock({ $0.stopped }) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, outstanding.isEmpty ? 1000 : 300)
            if ready == 0 {
                if !outstanding.isEmpty && !answer(&outstanding, fd: fd) { return }
                continue
            }
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { return }
            decoder.append(Array(buffer[0..<count]))
            while let frame = try? decoder.next() {
                guard frame.packetType == .request else { continue }
                let received = record(frame, serial: serial)
                switch frame.bizType {
                case 1:
                    let connected =
                        #"{"code":0,"msg":null,"data":{"connected":true,"protocolVersion":2,"connectionId":"c-\#(serial)","serverTimeMs":0,"configRevision":0,"heartbeatIntervalMs":60000,"collectKinds":[]}}"#
                    if !write(frame, connected, fd: fd) { return }
                case 3:
                    if !write(frame, #"{"code":0,"msg":null,"data":{"revision":1}}"#, fd: fd) { return }
                case 4, 5:
                    outstanding.append((frame, received))
                    state.withLock { $0.peakOutstanding = max($0.peakOutstanding, outstanding.count) }
                    if outstanding.count >= holdUploads && !answer(&outstanding, fd: fd) { return }
                default:
                    if !write(frame, #"{"code":0,"msg":null,"data":true}"#, fd: fd) { return }
                }
            }
        }
    }

    private func record(_ frame: Frame, serial: Int) -> Received {
        var batchID: String?
        if frame.bizType == 4 || frame.bizType == 5, let plain = try? frame.plaintext(),
            case .string(let id)? = try? JSONValue.parse(plain)["batchId"]
        {
            batchID = id
        }
        return state.withLock { state in
            let attempt = 1 + state.received.filter { $0.batchID != nil && $0.batchID == batchID }.count
            let received = Received(
                bizType: frame.bizType, compression: frame.compression, wirePayload: frame.payload,
                connection: serial, batchID: batchID, attempt: attempt)
            state.received.append(received)
            return received
        }
    }

    /// Answers every outstanding upload in arrival order (keeping those decided ``Action/later``);
    /// `false` once the connection is closed.
    private func answer(_ outstanding: inout [(Frame, Received)], fd: Int32) -> Bool {
        var kept: [(Frame, Received)] = []
        defer { outstanding = kept }
        for (frame, received) in outstanding {
            switch decide(received) {
            case .later:
                kept.append((frame, received))
            case .accept:
                if !write(frame, #"{"code":0,"msg":null,"data":true}"#, fd: fd) { return false }
            case .code(let code):
                if !write(frame, #"{"code":\#(code),"msg":"scripted","data":null}"#, fd: fd) { return false }
            case .noAnswer:
                continue
            case .disconnect:
                return false
            }
        }
        return true
    }

    private func write(_ request: Frame, _ json: String, fd: Int32) -> Bool {
        let bytes = Frame(
            packetType: .response, bizType: request.bizType, messageID: request.messageID, payload: Array(json.utf8)
        ).encoded()
        return writeAll(fd, bytes)
    }
}
