import Foundation
import Glibc
import MsgTrans
import PulseProtocol
import PulseTestSupport
import Synchronization

/// A Pulse server written directly against sockets, on threads of its own, behaving like a
/// msgtrans-rust 1.0 peer: every response carries biz_type 0 instead of echoing the request's.
/// It answers CONNECT, HEARTBEAT and uploads, and records the frames it received.
final class RawPulsePeer: Sendable {
    let port: Int
    private let listenFD: Int32
    private let received = Mutex<[FrameHeader]>([])

    /// The headers of every request received, in order.
    var requests: [FrameHeader] { received.withLock { $0 } }

    init() throws {
        guard let listener = LoopbackListener(backlog: 16) else { throw TestFailure("bind/listen failed") }
        listenFD = listener.descriptor
        port = listener.port
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops accepting; connections already served end when their peer closes.
    func stop() {
        shutdown(listenFD, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        acceptConnections(on: listenFD) { client in
            let thread = Thread { [self] in serve(client) }
            thread.start()
            return true
        }
        close(listenFD)
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var decoder = FrameDecoder()
        while let bytes = readSome(fd) {
            decoder.append(bytes)
            while true {
                let next: Frame?
                do {
                    next = try decoder.next()
                } catch {
                    return
                }
                guard let frame = next else { break }
                guard frame.packetType == .request else { continue }
                received.withLock { $0.append(frame.header) }
                let plaintext = (try? frame.plaintext()) ?? []
                let reply = Frame(
                    packetType: .response, bizType: 0, messageID: frame.messageID,
                    payload: answer(bizType: PulseBizType(rawValue: frame.bizType), payload: plaintext))
                guard writeAll(fd, reply.encoded()) else { return }
            }
        }
    }

    private func answer(bizType: PulseBizType, payload: [UInt8]) -> [UInt8] {
        switch bizType {
        case .clientConnect:
            return PulseEnvelope.ok(
                ConnectResult(
                    connectionId: "raw-1", serverTimeMs: 1_700_000_000_000, configRevision: 9,
                    heartbeatIntervalMs: 30_000)
            ).encodeJSON()
        case .clientHeartbeat:
            return PulseEnvelope.ok(
                HeartbeatResult(serverTimeMs: 1_700_000_000_000, configRevision: 10, heartbeatIntervalMs: 30_000)
            ).encodeJSON()
        case .clientEventBatchUpload, .clientCrashBatchUpload:
            return PulseEnvelope<Bool>.accepted.encodeJSON()
        default:
            return PulseEnvelope<Bool>.failure(.notFound, "unsupported").encodeJSON()
        }
    }
}
