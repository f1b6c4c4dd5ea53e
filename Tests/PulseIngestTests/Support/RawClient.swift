import Foundation
import Glibc
import MsgTrans
import PulseTestSupport
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
        configureTestSocket(fd)
    }

    deinit {
        Glibc.close(fd)
    }

    /// Connects to `127.0.0.1:port`.
    static func connect(port: Int) async -> RawClient {
        await onThread {
            guard let fd = connectToLoopback(port: port) else {
                preconditionFailure("raw connect failed: errno \(errno)")
            }
            return RawClient(fd: fd)
        }
    }

    /// Whether a TCP connection to `127.0.0.1:port` is accepted (the listener is open).
    static func canConnect(port: Int) async -> Bool {
        await onThread {
            guard let fd = connectToLoopback(port: port) else { return false }
            Glibc.close(fd)
            return true
        }
    }

    /// Allocates the next message id of this client (1, 2, …).
    func allocateID() -> UInt32 {
        defer { nextID += 1 }
        return nextID
    }

    /// Writes raw bytes.
    func write(_ bytes: [UInt8]) async {
        _ = await onThread { writeAll(self.fd, bytes) }
    }

    /// Builds a frame with the MsgTrans encoder and writes it; returns its message id.
    @discardableResult
    func send(
        _ packetType: PacketType = .request, biz: UInt8, json: String, compression: MsgTrans.Compression = .none,
        messageID: UInt32? = nil
    ) async -> UInt32 {
        await send(packetType, biz: biz, payload: Array(json.utf8), compression: compression, messageID: messageID)
    }

    /// Builds a frame from `payload` (compressed with `compression`, whatever its size) and writes it.
    @discardableResult
    func send(
        _ packetType: PacketType = .request, biz: UInt8, payload: [UInt8], compression: MsgTrans.Compression = .none,
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
        while true {
            if let frame = try? decoder.next() { return frame }
            guard let received = readSome(fd) else { return nil }
            decoder.append(received)
        }
    }

    /// Sends a request and reads its response, decoded as an envelope.
    func request(biz: UInt8, json: String, compression: MsgTrans.Compression = .none) async -> Response? {
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
