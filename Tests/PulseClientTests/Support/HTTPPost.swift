import Foundation
import Glibc

/// Posts `body` to `http://127.0.0.1:port/path` over a raw socket on a thread of its own and returns
/// the status code and response body (the request asks the server to close the connection).
func httpPost(port: Int, path: String, body: [UInt8]) async -> (status: Int, body: [UInt8])? {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            continuation.resume(returning: blockingPost(port: port, path: path, body: body))
        }
        thread.start()
    }
}

private func blockingPost(port: Int, path: String, body: [UInt8]) -> (status: Int, body: [UInt8])? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else { return nil }
    let head =
        "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
    let request = Array(head.utf8) + body
    var offset = 0
    while offset < request.count {
        let written = request[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written > 0 else { return nil }
        offset += written
    }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16_384)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { break }
        response += buffer[0..<count]
    }
    let separator: [UInt8] = [13, 10, 13, 10]
    guard
        let split = (0...(max(response.count - 4, 0))).first(where: {
            Array(response[$0..<min($0 + 4, response.count)]) == separator
        }),
        let statusLine = String(decoding: response[0..<split], as: UTF8.self).split(separator: "\r\n").first
    else {
        return nil
    }
    let parts = statusLine.split(separator: " ")
    guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
    var payload = Array(response[(split + 4)...])
    // A chunked body: keep only the chunk data.
    if String(decoding: response[0..<split], as: UTF8.self).lowercased().contains("transfer-encoding: chunked") {
        payload = dechunk(payload)
    }
    return (status, payload)
}

private func dechunk(_ bytes: [UInt8]) -> [UInt8] {
    var output: [UInt8] = []
    var index = 0
    while index < bytes.count {
        guard let lineEnd = (index..<bytes.count - 1).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
            let size = Int(String(decoding: bytes[index..<lineEnd], as: UTF8.self), radix: 16), size > 0
        else {
            break
        }
        let start = lineEnd + 2
        output += bytes[start..<min(start + size, bytes.count)]
        index = start + size + 2
    }
    return output
}
