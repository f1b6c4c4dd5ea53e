import Foundation
import Glibc

/// A failure of the test client.
package struct TestClientError: Error, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// A parsed HTTP/1.1 response as read off the socket.
package struct RawHTTPResponse: Sendable {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]

    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    package var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// A blocking TCP client speaking raw HTTP/1.1 bytes, for tests. Not for the cooperative pool: run it
/// with `onThread` so a blocked read never starves the server's handler tasks.
/// Used by one thread at a time (handed between threads, never shared concurrently).
package final class RawHTTPConnection: @unchecked Sendable {
    private let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to a loopback address (`127.0.0.1` or `::1`) with a receive timeout.
    package init(host: String = "127.0.0.1", port: Int, receiveTimeoutSeconds: Int = 15) throws {
        let connected = connectToLoopback(host: host, port: port) { fd in
            configureTestSocket(fd, receiveTimeoutSeconds: receiveTimeoutSeconds)
            var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        guard let connected else {
            throw TestClientError("connect to \(host) port \(port) failed: errno \(errno)")
        }
        fd = connected
    }

    deinit { Glibc.close(fd) }

    /// Closes the socket now (the descriptor stays reserved until deinit by shutting it down).
    package func close() {
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    package func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw TestClientError("send failed: errno \(errno)") }
            offset += sent
        }
    }

    package func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends a request with a `Content-Length` body.
    package func sendRequest(
        method: String = "GET", target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8) + body)
    }

    /// `true` when the server has sent nothing that is waiting to be read (and has not closed).
    package func nothingPending() -> Bool {
        guard pending.isEmpty else { return false }
        var byte: UInt8 = 0
        let received = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    /// Reads one response (Content-Length, chunked, or until close).
    package func readResponse(forHead: Bool = false) throws -> RawHTTPResponse {
        let headEnd = try readUntil(Array("\r\n\r\n".utf8))
        let head = String(decoding: pending[..<headEnd], as: UTF8.self)
        pending.removeFirst(headEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw TestClientError("bad status line in \(head.prefix(80))")
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = RawHTTPResponse(status: status, headers: headers, body: [])
        if forHead || status == 204 || status == 304 || (100...199).contains(status) { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
            try fill(length)
            response.body = Array(pending[..<length])
            pending.removeFirst(length)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                let lineEnd = try readUntil(Array("\r\n".utf8))
                let sizeText = String(decoding: pending[..<lineEnd], as: UTF8.self).split(separator: ";")[0]
                pending.removeFirst(lineEnd + 2)
                guard let size = Int(sizeText, radix: 16) else { throw TestClientError("bad chunk size") }
                try fill(size + 2)
                response.body += pending[..<size]
                pending.removeFirst(size + 2)
                if size == 0 { break }
            }
        } else {
            response.body = try readUntilClosed()
        }
        return response
    }

    /// Reads what the peer has sent (waiting up to the receive timeout); empty at the end of the
    /// stream. For another protocol on the same kind of socket (msgtrans frames). One thread may
    /// read this way while another sends.
    package func receiveAvailable() throws -> [UInt8] {
        if pending.isEmpty, try !receiveMore() {
            return []
        }
        defer { pending = [] }
        return pending
    }

    /// Reads until the peer closes; returns everything not yet consumed.
    package func readUntilClosed() throws -> [UInt8] {
        while try receiveMore() {}
        defer { pending = [] }
        return pending
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if pending.count >= marker.count {
                for start in searchFrom...(pending.count - marker.count)
                where pending[start..<(start + marker.count)].elementsEqual(marker) {
                    return start
                }
                searchFrom = pending.count - marker.count + 1
            }
            guard try receiveMore() else { throw TestClientError("connection closed before a complete head") }
        }
    }

    private func fill(_ count: Int) throws {
        while pending.count < count {
            guard try receiveMore() else { throw TestClientError("connection closed mid-body") }
        }
    }

    /// Reads what is available; `false` at end of stream.
    private func receiveMore() throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if received > 0 {
            pending += buffer[..<received]
            return true
        }
        if received == 0 { return false }
        if errno == ECONNRESET { return false }
        throw TestClientError("recv failed: errno \(errno)")
    }
}

/// Runs blocking work on its own thread and awaits the result, keeping Swift's cooperative pool free
/// for the server's handlers.
package func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
