import PulseHTTP
import PulseTestSupport
import Synchronization
import Testing

/// Starts a server on 127.0.0.1 with a free port; the caller shuts it down.
func startedServer(
    _ configuration: HTTPServerConfiguration = HTTPServerConfiguration(host: "127.0.0.1", port: 0),
    handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse
) throws -> (HTTPServer, Int) {
    let server = HTTPServer(configuration: configuration, handler: handler)
    try server.start()
    return (server, try #require(server.port))
}

/// Starts a server on 127.0.0.1 with a free port, runs `body`, then shuts the server down.
func withServer<T>(
    _ configuration: HTTPServerConfiguration = HTTPServerConfiguration(host: "127.0.0.1", port: 0),
    handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse,
    _ body: (HTTPServer, Int) async throws -> T
) async throws -> T {
    let (server, port) = try startedServer(configuration, handler: handler)
    do {
        let result = try await body(server, port)
        await server.shutdown(gracePeriod: .seconds(5))
        return result
    } catch {
        await server.shutdown(gracePeriod: .seconds(5))
        throw error
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() { value.add(1, ordering: .relaxed) }
    var current: Int { value.load(ordering: .relaxed) }
}

/// A plain-text 200 response.
func textResponse(_ text: String, status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: Array(text.utf8))
}

/// A thread-safe list of values collected from several threads.
final class Collector<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// A handler that holds each request (for `path` only, when given; the others get `others` at
/// once): it opens `entered`, waits for `release`, then answers with `answer()`.
func holding(
    _ path: String? = nil, others: HTTPResponse = HTTPResponse(status: .notFound), entered: Gate, release: Gate,
    answer: @escaping @Sendable () async -> HTTPResponse
) -> @Sendable (HTTPRequest) async -> HTTPResponse {
    { request in
        guard path == nil || request.path == path else { return others }
        entered.open()
        await release.wait()
        return await answer()
    }
}
