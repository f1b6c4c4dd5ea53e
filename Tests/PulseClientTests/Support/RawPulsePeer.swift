import Foundation
import Glibc
import MsgTrans
import PulseProtocol
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
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw TestFailure("bind/listen failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listenFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops accepting; connections already served end when their peer closes.
    func stop() {
        shutdown(listenFD, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let client = accept(listenFD, nil, nil)
            guard client >= 0 else {
                close(listenFD)
                return
            }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var decoder = FrameDecoder()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            decoder.append(Array(buffer[0..<count]))
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
                let bytes = reply.encoded()
                var offset = 0
                while offset < bytes.count {
                    let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    guard written > 0 else { return }
                    offset += written
                }
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
