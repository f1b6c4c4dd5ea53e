import Dispatch
import Foundation
import PulseTestSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A small HTTP/1.1 server on raw sockets (loopback, port 0) whose answers are scripted per request, to
/// inject the faults an uploader meets: dropped connections, throttling, slow answers, rejections.
///
/// Each accepted connection runs on its own thread and may carry several requests (keep-alive). Requests
/// take behaviors from the script in arrival order; once it is empty, ``fallback`` answers.
final class FaultServer: Sendable {
    /// What to do with one request.
    indirect enum Behavior: Sendable {
        /// Answer with a status, headers and body.
        case respond(status: Int, headers: [String: String] = [:], body: String = "{}")
        /// Close the connection after the request headers, before reading the body.
        case dropMidRequest
        /// Read the whole request, then close without answering.
        case dropAfterRequest
        /// Read the whole request, wait, then behave as `then`.
        case slow(milliseconds: Int, then: Behavior)
        /// Read the whole request and never answer (until the server stops).
        case hang

        static let ok = Behavior.respond(status: 200)
    }

    /// A request the server read completely.
    struct Request: Sendable {
        var method: String
        var path: String
        /// Header names lower-cased.
        var headers: [String: String]
        var body: [UInt8]
        /// Which accepted connection carried it (0-based).
        var connection: Int
    }

    private struct State {
        var script: [Behavior] = []
        var fallback: Behavior = .ok
        var requests: [Request] = []
        var connections = 0
        var incomplete = 0
        var sockets: Set<Int32> = []
        var stopped = false
    }

    private let listener: Int32
    /// The bound port.
    let port: UInt16
    private let state = Mutex(State())
    private let stopSignal = DispatchSemaphore(value: 0)

    /// The base URL, e.g. `http://127.0.0.1:38211`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    init(script: [Behavior] = [], fallback: Behavior = .ok) throws {
        guard let loopback = LoopbackListener(backlog: 64) else { throw FaultServerError.socket(errno) }
        listener = loopback.descriptor
        port = UInt16(loopback.port)
        state.withLock {
            $0.script = script
            $0.fallback = fallback
        }
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit {
        stop()
    }

    /// Appends behaviors to the script.
    func enqueue(_ behaviors: [Behavior]) {
        state.withLock { $0.script += behaviors }
    }

    /// Sets the behavior used once the script is empty.
    func setFallback(_ behavior: Behavior) {
        state.withLock { $0.fallback = behavior }
    }

    /// Requests read completely so far, in arrival order.
    var requests: [Request] { state.withLock { $0.requests } }
    /// Connections accepted so far.
    var connectionCount: Int { state.withLock { $0.connections } }
    /// Requests whose connection was dropped before the body was read.
    var droppedMidRequest: Int { state.withLock { $0.incomplete } }

    /// Waits (``eventually(within:_:)``) until `count` requests arrived; returns whether they did within
    /// `seconds`.
    func waitForRequests(_ count: Int, seconds: Double = 10) async -> Bool {
        await eventually(within: .seconds(seconds)) { self.requests.count >= count }
    }

    /// Closes the listener and every connection; hanging requests are released.
    func stop() {
        let sockets = state.withLock { state -> Set<Int32>? in
            guard !state.stopped else { return nil }
            state.stopped = true
            return state.sockets
        }
        guard let sockets else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for socket in sockets {
            shutdown(socket, Int32(SHUT_RDWR))
        }
        for _ in 0..<64 {
            stopSignal.signal()
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
        acceptConnections(on: listener) { client in
            let index = state.withLock { state -> Int? in
                guard !state.stopped else { return nil }
                state.sockets.insert(client)
                state.connections += 1
                return state.connections - 1
            }
            guard let index else {
                close(client)
                return false
            }
            let thread = Thread { [self] in
                serve(client, connection: index)
                state.withLock { _ = $0.sockets.remove(client) }
                close(client)
            }
            thread.start()
            return true
        }
    }

    private func nextBehavior() -> Behavior {
        state.withLock { state in
            state.script.isEmpty ? state.fallback : state.script.removeFirst()
        }
    }

    /// Serves requests on one connection until it closes or a behavior closes it.
    private func serve(_ socket: Int32, connection: Int) {
        var buffer: [UInt8] = []
        while !isStopped {
            guard let head = readHead(socket, &buffer) else { return }
            let behavior = nextBehavior()
            if case .dropMidRequest = behavior {
                state.withLock { $0.incomplete += 1 }
                return
            }
            guard let body = readBody(socket, &buffer, length: head.contentLength) else { return }
            state.withLock {
                $0.requests.append(
                    Request(
                        method: head.method, path: head.path, headers: head.headers, body: body,
                        connection: connection))
            }
            guard act(behavior, on: socket) else { return }
            if head.headers["connection"]?.lowercased() == "close" { return }
        }
    }

    /// Carries out `behavior` after a complete request; returns whether the connection stays open.
    private func act(_ behavior: Behavior, on socket: Int32) -> Bool {
        switch behavior {
        case .respond(let status, let headers, let body):
            var text = "HTTP/1.1 \(status) \(reason(status))\r\n"
            var all = headers
            all["Content-Type"] = all["Content-Type"] ?? "application/json"
            all["Content-Length"] = String(body.utf8.count)
            for (name, value) in all.sorted(by: { $0.key < $1.key }) {
                text += "\(name): \(value)\r\n"
            }
            text += "\r\n" + body
            return writeAll(socket, Array(text.utf8))
        case .dropMidRequest, .dropAfterRequest:
            return false
        case .slow(let milliseconds, let then):
            _ = stopSignal.wait(timeout: .now() + .milliseconds(milliseconds))
            if isStopped { return false }
            return act(then, on: socket)
        case .hang:
            stopSignal.wait()
            return false
        }
    }

    private struct Head {
        var method: String
        var path: String
        var headers: [String: String]
        var contentLength: Int
    }

    private func readHead(_ socket: Int32, _ buffer: inout [UInt8]) -> Head? {
        while true {
            if let end = findHeaderEnd(buffer) {
                let text = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                var lines = text.components(separatedBy: "\r\n")
                let requestLine = lines.removeFirst().split(separator: " ")
                guard requestLine.count >= 2 else { return nil }
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                        .trimmingCharacters(in: .whitespaces)
                }
                return Head(
                    method: String(requestLine[0]), path: String(requestLine[1]), headers: headers,
                    contentLength: Int(headers["content-length"] ?? "0") ?? 0)
            }
            guard readMore(socket, &buffer) else { return nil }
        }
    }

    private func readBody(_ socket: Int32, _ buffer: inout [UInt8], length: Int) -> [UInt8]? {
        while buffer.count < length {
            guard readMore(socket, &buffer) else { return nil }
        }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return body
    }

    private func readMore(_ socket: Int32, _ buffer: inout [UInt8]) -> Bool {
        guard let chunk = readSome(socket) else { return false }
        buffer.append(contentsOf: chunk)
        return true
    }

    private func findHeaderEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    private func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 413: return "Content Too Large"
        case 415: return "Unsupported Media Type"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }
}

enum FaultServerError: Error {
    case socket(Int32)
}
