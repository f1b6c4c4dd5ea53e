import CCurl
import CPulseShims
import Dispatch
import Foundation
public import PulseKit
import Synchronization

/// An ``UploadTransport`` on libcurl: a few persistent easy handles, each owned by a dedicated thread.
///
/// Each handle keeps its connection alive between requests (HTTP keep-alive), so a foreground session costs
/// one TCP (and TLS) handshake per handle, not per batch. `connections` bounds the requests in flight.
/// `curl_easy_perform` blocks, so it runs only on those threads, never on Swift's cooperative pool.
public final class CurlTransport: UploadTransport {
    /// Transport settings.
    public struct Options: Sendable, Equatable {
        /// Persistent handles, and therefore the most requests in flight (default 2).
        public var connections: Int
        /// Connect timeout (default 10 s).
        public var connectTimeoutMilliseconds: Int
        /// Whole-request timeout (default 60 s).
        public var requestTimeoutMilliseconds: Int
        /// The most response-body bytes kept; the rest is discarded (default 64 KiB).
        public var maximumResponseBytes: Int

        /// Creates options.
        public init(
            connections: Int = 2, connectTimeoutMilliseconds: Int = 10_000, requestTimeoutMilliseconds: Int = 60_000,
            maximumResponseBytes: Int = 64 * 1024
        ) {
            self.connections = max(1, connections)
            self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
            self.requestTimeoutMilliseconds = requestTimeoutMilliseconds
            self.maximumResponseBytes = maximumResponseBytes
        }
    }

    private let queue: CurlJobQueue
    private let options: Options

    /// Starts `options.connections` threads, each with its own easy handle.
    public init(options: Options = Options()) {
        CurlTransport.globalInit
        self.options = options
        queue = CurlJobQueue()
        for index in 0..<options.connections {
            let worker = CurlWorker(queue: queue, options: options)
            let started = DispatchSemaphore(value: 0)
            let thread = Thread {
                started.wait()
                Thread.current.name = "pulse.curl.\(index)"
                worker.run()
            }
            thread.start()
            started.signal()
        }
    }

    deinit {
        queue.shutdown(workers: options.connections)
    }

    /// Stops the threads after the requests already queued; later sends fail with ``UploaderError/Code/closed``.
    public func close() {
        queue.shutdown(workers: options.connections)
    }

    public func send(_ request: UploadRequest) async throws(UploaderError) -> UploadResponse {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<CurlJob.Outcome, Never>) in
            if !queue.submit(CurlJob(request: request, continuation: continuation)) {
                continuation.resume(returning: .failure(UploaderError(.closed, "the transport is closed")))
            }
        }
        return try result.get()
    }

    private static let globalInit: Void = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()
}

/// One queued request and the continuation of its caller.
struct CurlJob: Sendable {
    typealias Outcome = Result<UploadResponse, UploaderError>
    let request: UploadRequest
    let continuation: CheckedContinuation<Outcome, Never>
}

/// The jobs shared by the worker threads.
final class CurlJobQueue: Sendable {
    private struct State {
        var jobs: [CurlJob] = []
        var head = 0
        var closed = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)

    func submit(_ job: CurlJob) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted {
            available.signal()
        }
        return accepted
    }

    /// Blocks until a job is available; `nil` once the queue is closed and empty.
    func next() -> CurlJob? {
        while true {
            available.wait()
            let (job, closed) = state.withLock { state -> (CurlJob?, Bool) in
                guard state.head < state.jobs.count else { return (nil, state.closed) }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head > 64 && state.head * 2 > state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return (job, false)
            }
            if let job {
                return job
            }
            if closed {
                return nil
            }
        }
    }

    func shutdown(workers: Int) {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        for _ in 0..<workers {
            available.signal()
        }
    }
}

/// A worker thread's state: one easy handle, reused for every request so its connection stays alive.
private final class CurlWorker: @unchecked Sendable {
    private let queue: CurlJobQueue
    private let options: CurlTransport.Options

    init(queue: CurlJobQueue, options: CurlTransport.Options) {
        self.queue = queue
        self.options = options
    }

    func run() {
        guard let handle = curl_easy_init() else {
            while let job = queue.next() {
                job.continuation.resume(
                    returning: .failure(UploaderError(.network, "curl_easy_init failed")))
            }
            return
        }
        defer { curl_easy_cleanup(handle) }
        while let job = queue.next() {
            job.continuation.resume(returning: perform(job.request, handle: handle))
        }
    }

    private func perform(_ request: UploadRequest, handle: UnsafeMutableRawPointer) -> CurlJob.Outcome {
        let sink = ResponseSink(limit: options.maximumResponseBytes)
        var headers: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers {
            headers = curl_slist_append(headers, "\(name): \(value)")
        }
        // No `Expect: 100-continue` round trip: the body is small and already in memory.
        headers = curl_slist_append(headers, "Expect:")
        defer { curl_slist_free_all(headers) }

        let unmanaged = Unmanaged.passRetained(sink)
        defer { unmanaged.release() }
        let context = unmanaged.toOpaque()

        var setupFailure: CURLcode = CURLE_OK
        func set(_ code: CURLcode) {
            if setupFailure == CURLE_OK && code != CURLE_OK {
                setupFailure = code
            }
        }
        set(pg_curl_setopt_string(handle, CURLOPT_URL, request.url))
        set(pg_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(pg_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        let isGet = request.method == "GET"
        set(pg_curl_setopt_long(handle, isGet ? CURLOPT_HTTPGET : CURLOPT_POST, 1))
        set(pg_curl_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1))
        set(pg_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, options.connectTimeoutMilliseconds))
        set(pg_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, options.requestTimeoutMilliseconds))
        set(pg_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers))
        set(pg_curl_setopt_write_function(handle, curlWriteCallback, context))
        set(pg_curl_setopt_header_function(handle, curlHeaderCallback, context))
        if !isGet {
            set(pg_curl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
        }

        let code: CURLcode = request.body.withUnsafeBytes { body in
            // The body stays borrowed for the duration of the perform; curl does not copy it.
            if !isGet {
                set(
                    pg_curl_setopt_pointer(
                        handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: body.baseAddress)))
            }
            guard setupFailure == CURLE_OK else { return setupFailure }
            return curl_easy_perform(handle)
        }
        // Never leave a pointer to a released body or header list in the handle.
        _ = pg_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, nil)
        _ = pg_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, nil)

        guard code == CURLE_OK else {
            let reason = String(cString: curl_easy_strerror(code))
            return .failure(UploaderError(.network, "curl: \(reason) (\(code.rawValue))"))
        }
        var status = 0
        _ = pg_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(UploadResponse(status: status, headers: sink.headers, body: sink.body))
    }
}

/// Collects one response's headers and (bounded) body from the curl callbacks.
private final class ResponseSink {
    let limit: Int
    var body: [UInt8] = []
    var headers: [String: String] = [:]

    init(limit: Int) {
        self.limit = limit
    }

    func appendBody(_ bytes: UnsafeRawBufferPointer) {
        let room = max(0, limit - body.count)
        body.append(contentsOf: bytes.prefix(room))
    }

    func appendHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        let line = String(decoding: bytes, as: UTF8.self).trimmingASCIIWhitespace()
        if line.hasPrefix("HTTP/") {
            // A new response (after `100 Continue` or a redirect): start over.
            headers.removeAll()
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = String(line[line.index(after: colon)...]).trimmingASCIIWhitespace()
        headers[name] = value
    }
}

private func curlWriteCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    deliver(data, size * count, to: context) { $0.appendBody($1) }
}

private func curlHeaderCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    deliver(data, size * count, to: context) { $0.appendHeaderLine($1) }
}

/// Hands the `total` bytes curl passed to a callback to the ``ResponseSink`` behind `context`;
/// returns `total`, which tells curl they were all taken.
private func deliver(
    _ data: UnsafeMutablePointer<CChar>?, _ total: Int, to context: UnsafeMutableRawPointer?,
    _ append: (ResponseSink, UnsafeRawBufferPointer) -> Void
) -> Int {
    guard let data, let context else { return total }
    let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
    append(sink, UnsafeRawBufferPointer(start: data, count: total))
    return total
}
