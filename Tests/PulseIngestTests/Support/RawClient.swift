import Foundation
import Glibc
import MsgTrans
import Synchronization

/// Runs blocking work (socket calls) on a thread of its own, never on the cooperative pool.
func onThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}

/// A test peer that speaks msgtrans with plain blocking sockets: it writes frame bytes built with
/// the MsgTrans encoder and reads whatever comes back, so the server is judged against the wire
/// rather than against our own client runtime.
final class RawClient: @unchecked Sendable {
    let fd: Int32
    private var decoder = FrameDecoder()
    private var nextID: UInt32 = 1

    private init(fd: Int32) {
        self.fd = fd
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        Glibc.close(fd)
    }

    /// Connects to `127.0.0.1:port`.
    static func connect(port: Int) async -> RawClient {
        await onThread {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            precondition(result == 0, "raw connect failed: errno \(errno)")
            return RawClient(fd: fd)
        }
    }

    /// Whether a TCP connection to `127.0.0.1:port` is accepted (the listener is open).
    static func canConnect(port: Int) async -> Bool {
        await onThread {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { Glibc.close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            } == 0
        }
    }

    /// Allocates the next message id of this client (1, 2, …).
    func allocateID() -> UInt32 {
        defer { nextID += 1 }
        return nextID
    }

    /// Writes raw bytes.
    func write(_ bytes: [UInt8]) async {
        await onThread {
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes {
                    Glibc.send(self.fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Builds a frame with the MsgTrans encoder and writes it; returns its message id.
    @discardableResult
    func send(
        _ packetType: PacketType = .request, biz: UInt8, json: String, compression: Compression = .none,
        messageID: UInt32? = nil
    ) async -> UInt32 {
        await send(packetType, biz: biz, payload: Array(json.utf8), compression: compression, messageID: messageID)
    }

    /// Builds a frame from `payload` (compressed with `compression`, whatever its size) and writes it.
    @discardableResult
    func send(
        _ packetType: PacketType = .request, biz: UInt8, payload: [UInt8], compression: Compression = .none,
        messageID: UInt32? = nil
    ) async -> UInt32 {
        let id = messageID ?? allocateID()
        let frame = try! Frame.make(
            packetType: packetType, bizType: biz, messageID: id, plaintext: payload, preferred: compression,
            policy: CompressionPolicy(compressionMinBytes: 0))
        await write(frame.encoded())
        return id
    }

    /// Reads the next frame; `nil` on EOF, reset or timeout.
    func readFrame() async -> Frame? {
        await onThread { self.readFrameBlocking() }
    }

    private func readFrameBlocking() -> Frame? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let frame = try? decoder.next() { return frame }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return nil }
            decoder.append(Array(buffer[0..<count]))
        }
    }

    /// Sends a request and reads its response, decoded as an envelope.
    func request(biz: UInt8, json: String, compression: Compression = .none) async -> Response? {
        let id = await send(biz: biz, json: json, compression: compression)
        guard let frame = await readFrame() else { return nil }
        return Response(frame: frame, expectedID: id)
    }

    /// Whether the server closed the connection: reads until EOF (true) and fails if any byte
    /// arrives or the read times out first.
    func readsEOFWithoutBytes() async -> Bool {
        await onThread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(self.fd, $0.baseAddress, $0.count) }
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
            return false
        }
    }

    /// Shuts the socket down in both directions (the server sees the connection end).
    func hangUp() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Closes the socket's sending side.
    func shutdownWrite() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }
}

/// A response frame with its envelope parsed (Foundation is fine in tests).
struct Response: @unchecked Sendable {
    let frame: Frame
    let expectedID: UInt32
    let plaintext: [UInt8]
    let object: [String: Any]

    init?(frame: Frame, expectedID: UInt32) {
        guard let plaintext = try? frame.plaintext(),
            let object = (try? JSONSerialization.jsonObject(with: Data(plaintext))) as? [String: Any]
        else { return nil }
        self.frame = frame
        self.expectedID = expectedID
        self.plaintext = plaintext
        self.object = object
    }

    var code: Int { (object["code"] as? NSNumber)?.intValue ?? 0 }
    var message: String? { object["msg"] as? String }
    var data: Any? { object["data"] }
    var dataObject: [String: Any] { (object["data"] as? [String: Any]) ?? [:] }
    var text: String { String(decoding: plaintext, as: UTF8.self) }
    /// Whether the frame is a Response echoing the request's id.
    var echoesRequest: Bool { frame.packetType == .response && frame.messageID == expectedID }
}
