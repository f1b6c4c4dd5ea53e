import Foundation
import Glibc

/// A minimal HTTP/1.1 client over a raw socket for the admin endpoint.
enum HTTPProbe {
    struct Reply: @unchecked Sendable {
        var status: Int
        var body: [UInt8]
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(body)) }
        var object: [String: Any] { (json as? [String: Any]) ?? [:] }
    }

    static func send(port: Int, method: String = "GET", path: String, body: String? = nil) async -> Reply? {
        await onThread {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { Glibc.close(fd) }
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { return nil }
            let payload = Array((body ?? "").utf8)
            var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            if body != nil {
                request += "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n"
            }
            let bytes = Array((request + "\r\n").utf8) + payload
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                received += buffer[0..<count]
            }
            let separator = Array("\r\n\r\n".utf8)
            guard
                let split = (0..<max(0, received.count - 3)).first(where: { Array(received[$0..<$0 + 4]) == separator })
            else { return nil }
            let head = String(decoding: received[0..<split], as: UTF8.self)
            let statusLine = head.split(separator: "\r\n").first ?? ""
            let parts = statusLine.split(separator: " ")
            guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
            return Reply(status: status, body: Array(received[(split + 4)...]))
        }
    }
}
