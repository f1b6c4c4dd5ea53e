import Dispatch
import Foundation
import PulseHTTP
import PulseTestSupport
import Synchronization
import Testing

/// A stand-in for a database's commit thread: a dedicated thread that collects responders and
/// answers every one it holds at once, `interval` after the first arrived (a group commit), from
/// itself — never from the cooperative pool or the libmicrohttpd thread that dispatched them.
private final class CommitThread: Sendable {
    private struct Pending: Sendable {
        let responder: HTTPResponder
        let body: [UInt8]
    }

    private let pending = Mutex<(jobs: [Pending], held: Bool)>(([], false))
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled when `held` changes.
    private let released = NSCondition()
    private let stopped = Atomic<Bool>(false)
    /// Answers given, and answers whose request was answered already (by a shutdown).
    let answered = Counter()
    let dropped = Counter()
    /// The thread's identity, set once it runs.
    private let identity = Mutex<ObjectIdentifier?>(nil)

    init(interval: Duration) {
        let thread = Thread { [self] in
            identity.withLock { $0 = ObjectIdentifier(Thread.current) }
            while !stopped.load(ordering: .relaxed) {
                wake.wait()
                // A sleep: the commit's duration, the latency the responder must bridge (behaviour under test).
                Thread.sleep(forTimeInterval: Double(interval.components.attoseconds) / 1e18)
                released.lock()
                while pending.withLock({ $0.held }) { released.wait() }
                released.unlock()
                let jobs = pending.withLock { state in
                    defer { state.jobs = [] }
                    return state.jobs
                }
                for job in jobs {
                    let ok = job.responder.respond(HTTPResponse(status: .ok, body: job.body))
                    (ok ? answered : dropped).increment()
                }
            }
        }
        thread.start()
    }

    func submit(_ responder: HTTPResponder, echoing body: [UInt8]) {
        let first = pending.withLock { state in
            state.jobs.append(Pending(responder: responder, body: body))
            return state.jobs.count == 1
        }
        if first { wake.signal() }
    }

    /// While held, nothing is answered (a commit that takes its time).
    func hold(_ held: Bool) {
        released.lock()
        pending.withLock { $0.held = held }
        released.broadcast()
        released.unlock()
    }

    var waiting: Int { pending.withLock { $0.jobs.count } }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
    }
}

/// How many TCP connections to the local `port` (IPv4) have received their peer's FIN and wait
/// for the server to close them (`CLOSE_WAIT` in `/proc/net/tcp`).
private func hungUpConnections(port: Int) -> Int {
    guard let table = fopen("/proc/net/tcp", "r") else { return 0 }
    defer { fclose(table) }
    let local = ":" + String(format: "%04X", port)
    var count = 0
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, table) > 0, let line {
        let fields = String(cString: line).split(separator: " ")
        if fields.count > 3 && fields[1].hasSuffix(local) && fields[3] == "08" { count += 1 }
    }
    return count
}

/// The calling thread's name as the kernel knows it (libmicrohttpd names its threads `MHD-…`).
private func currentThreadName() -> String {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
}

@Suite struct ResponderTests {
    private static func server(_ commit: CommitThread, dispatchedOn threads: Collector<Bool>) -> HTTPServer {
        HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0)) { request, responder in
            // libmicrohttpd's thread, not a Swift task.
            threads.append(currentThreadName().hasPrefix("MHD"))
            if request.path == "/now" {
                responder.respond(textResponse("answered in dispatch"))
                // Only the first answer counts.
                threads.append(!responder.respond(textResponse("second answer")))
                return
            }
            commit.submit(responder, echoing: request.body)
        }
    }

    /// A started ``server(_:dispatchedOn:)`` on a commit thread that answers every `interval`, and
    /// its port. The test stops the commit thread.
    private static func started(
        interval: Duration, dispatchedOn threads: Collector<Bool> = Collector<Bool>()
    ) throws -> (CommitThread, HTTPServer, Int) {
        let commit = CommitThread(interval: interval)
        do {
            let server = Self.server(commit, dispatchedOn: threads)
            try server.start()
            return (commit, server, try #require(server.port))
        } catch {
            commit.stop()
            throw error
        }
    }

    /// A started server whose commit thread holds its answers until `hold(false)`.
    private static func heldServer() throws -> (CommitThread, HTTPServer, Int) {
        let (commit, server, port) = try started(interval: .milliseconds(1))
        commit.hold(true)
        return (commit, server, port)
    }

    /// A connection that has sent a POST of `text` to be answered by the commit thread.
    private static func posting(_ text: String, port: Int) throws -> RawHTTPConnection {
        let connection = try RawHTTPConnection(port: port)
        try connection.sendRequest(method: "POST", target: "/commit", body: Array(text.utf8))
        return connection
    }

    @Test func manyConcurrentRequestsAreAllAnsweredFromTheCommitThread() async throws {
        let dispatched = Collector<Bool>()
        let (commit, server, port) = try Self.started(interval: .milliseconds(2), dispatchedOn: dispatched)
        defer { commit.stop() }
        let connections = 48
        let rounds = 3
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<connections {
                group.addTask {
                    try await onThread {
                        let connection = try RawHTTPConnection(port: port)
                        // Keep-alive: each answer from the commit thread resumes the connection for the next.
                        for round in 0..<rounds {
                            let body = Array("request \(index).\(round)".utf8)
                            try connection.sendRequest(method: "POST", target: "/commit", body: body)
                            let response = try connection.readResponse()
                            #expect(response.status == 200)
                            #expect(response.body == body)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(commit.answered.current == connections * rounds)
        #expect(dispatched.all.count == connections * rounds)
        #expect(dispatched.all.allSatisfy { $0 })
        await server.shutdown(gracePeriod: .seconds(5))
    }

    @Test func anAnswerGivenInsideDispatchIsSentAndASecondOneDropped() async throws {
        let dispatched = Collector<Bool>()
        let (commit, server, port) = try Self.started(interval: .milliseconds(1), dispatchedOn: dispatched)
        defer { commit.stop() }
        let connection = try RawHTTPConnection(port: port)
        for _ in 0..<2 {
            try connection.sendRequest(target: "/now")
            let response = try await onThread { try connection.readResponse() }
            #expect(response.status == 200)
            #expect(response.bodyText == "answered in dispatch")
        }
        #expect(dispatched.all == [true, true, true, true])
        await server.shutdown(gracePeriod: .seconds(5))
    }

    @Test func aClientThatLeavesWhileItsRequestCommitsDoesNotDisturbTheOthers() async throws {
        let (commit, server, port) = try Self.heldServer()
        defer { commit.stop() }
        let leaving = try Self.posting("gone", port: port)
        let staying = try Self.posting("here", port: port)
        _ = await eventually { commit.waiting >= 2 }
        leaving.close()
        // libmicrohttpd does not watch a suspended connection, so only the kernel knows of the
        // hang-up until the answer is written: wait until the server's socket has the FIN.
        #expect(await eventually { hungUpConnections(port: port) == 1 })
        // Both are answered from the commit thread; the closed one's answer goes nowhere.
        commit.hold(false)
        let response = try await onThread { try staying.readResponse() }
        #expect(response.bodyText == "here")
        #expect(throws: (any Error).self) { try leaving.readResponse() }
        // The server still serves, and shuts down with nothing left suspended.
        let next = try Self.posting("next", port: port)
        #expect(try await onThread { try next.readResponse() }.bodyText == "next")
        await server.shutdown(gracePeriod: .seconds(5))
        // The commit thread counts an answer after handing it over: the count may trail the read.
        #expect(await eventually { commit.answered.current == 3 })
        #expect(commit.dropped.current == 0)
    }

    @Test func shutdownWaitsForAnswersStillCommittingAndLosesNone() async throws {
        let (commit, server, port) = try Self.heldServer()
        defer { commit.stop() }
        let clients = try (0..<8).map { try Self.posting("in flight \($0)", port: port) }
        _ = await eventually { commit.waiting >= clients.count }
        let shutdown = Task { await server.shutdown(gracePeriod: .seconds(10)) }
        // The commits end while the shutdown waits for the suspended answers.
        #expect(await eventually { server.isDraining })
        commit.hold(false)
        for (index, client) in clients.enumerated() {
            let response = try await onThread { try client.readResponse() }
            #expect(response.status == 200)
            #expect(response.bodyText == "in flight \(index)")
        }
        await shutdown.value
        #expect(commit.answered.current == clients.count)
        #expect(commit.dropped.current == 0)
    }

    /// The commit thread's answers resume their connections while a shutdown with no patience forces
    /// the same slots: each request gets exactly one answer (its 200 or the 503), and the daemon stops
    /// only after every resume has returned (a stop during one would abort or touch a freed daemon).
    @Test func answersRacingAShutdownAreEachSentOnce() async throws {
        for round in 0..<24 {
            let (commit, server, port) = try Self.heldServer()
            defer { commit.stop() }
            let clients = try (0..<16).map { try Self.posting("round \(round) client \($0)", port: port) }
            _ = await eventually { commit.waiting >= clients.count }
            // The shutdown starts at different moments of the commit thread's answers, round by round.
            commit.hold(false)
            usleep(useconds_t(round % 8 * 15))
            let shutdown = Task { await server.shutdown(gracePeriod: .zero) }
            var ok = 0
            for (index, client) in clients.enumerated() {
                let response = try await onThread { try client.readResponse() }
                #expect(response.status == 200 || response.status == 503)
                if response.status == 200 {
                    #expect(response.bodyText == "round \(round) client \(index)")
                    ok += 1
                }
            }
            await shutdown.value
            #expect(await eventually { commit.answered.current + commit.dropped.current == clients.count })
            #expect(commit.answered.current == ok)
        }
    }

    @Test func aShutdownThatRunsOutOfPatienceAnswers503AndTheLateCommitIsDropped() async throws {
        let (commit, server, port) = try Self.heldServer()
        defer { commit.stop() }
        let client = try Self.posting("late", port: port)
        _ = await eventually { commit.waiting >= 1 }
        await server.shutdown(gracePeriod: .milliseconds(100))
        #expect(try await onThread { try client.readResponse() }.status == 503)
        commit.hold(false)
        _ = await eventually { commit.dropped.current >= 1 }
        #expect(commit.answered.current == 0)
    }
}
