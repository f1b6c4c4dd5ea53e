import CMicroHTTPD
import Synchronization

/// A libmicrohttpd connection pointer that may cross threads.
///
/// It is only dereferenced by libmicrohttpd, and only while the rules of ``ResponseSlot`` guarantee the
/// connection is alive (suspended connections are never closed).
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// The hand-over point between a handler task and the libmicrohttpd thread that owns a suspended
/// connection.
///
/// Exactly one party wins ``fulfill(_:)`` (or ``proceed()``): the handler task when it returns (or the
/// memory wait when it ends), or a shutdown that ran out of patience. The winner stores the response
/// under the lock, registers its resume with the server's ``Resumes``, releases the lock and only then
/// resumes the connection, so the owning thread, woken by the resume, finds the lock free when it picks
/// the response up with ``take()`` in the next access-handler call and queues it there. A shutdown
/// that finds a slot no longer suspended waits in ``Resumes/waitUntilDone()`` for the resume to have
/// returned (a daemon must not be stopped while a connection is suspended, or while a resume still
/// signals its threads).
///
/// The slot is a separate, retained object: a handler task keeps it alive on its own, so a client that
/// disconnects (and a request context that is freed) never leaves the task with a dangling pointer.
final class ResponseSlot: Sendable {
    private enum State: Sendable {
        case suspended(ConnectionHandle)
        case ready(HTTPResponse)
        case delivered
    }

    private let state: Mutex<State>
    /// The server's resumes in progress, which a shutdown waits for.
    private let resumes: Resumes

    /// Creates a slot for a connection that the caller suspends right away.
    init(suspended connection: ConnectionHandle, resumes: Resumes) {
        state = Mutex(.suspended(connection))
        self.resumes = resumes
    }

    /// Stores `response` and resumes the connection, if nobody did so before. Returns whether this
    /// call won. Safe from any thread.
    @discardableResult
    func fulfill(_ response: HTTPResponse) -> Bool {
        resume(leaving: .ready(response))
    }

    /// Resumes the connection without a response (the owning thread carries on with the request), if
    /// nobody fulfilled the slot before. Returns whether this call won.
    @discardableResult
    func proceed() -> Bool {
        resume(leaving: .delivered)
    }

    /// Moves a suspended slot to `next` and resumes its connection after the lock is released;
    /// returns `false` (and does nothing) if the slot was not suspended any more.
    private func resume(leaving next: State) -> Bool {
        let claimed: ConnectionHandle? = state.withLock { state in
            guard case .suspended(let connection) = state else { return nil }
            state = next
            // Inside the lock: whoever later finds the slot claimed also finds the resume counted.
            resumes.begin()
            return connection
        }
        guard let claimed else { return false }
        MHD_resume_connection(claimed.pointer)
        resumes.end()
        return true
    }

    /// Takes the stored response, once. Called on the connection's own thread after the resume.
    func take() -> HTTPResponse? {
        state.withLock { state in
            guard case .ready(let response) = state else { return nil }
            state = .delivered
            return response
        }
    }
}

/// Answers one request whose connection is suspended: ``respond(_:)`` stores the response and
/// resumes the connection, from any thread — a Swift task, a database's commit thread, or the
/// libmicrohttpd thread that dispatched the request (``HTTPServer/init(configuration:dispatch:)``).
///
/// Only the first answer counts: a later one, or one after a shutdown already answered the request
/// with 503, is dropped. A responder that is never answered keeps its connection suspended until the
/// shutdown forces it, so every path through a dispatcher must answer.
package struct HTTPResponder: Sendable {
    let slot: ResponseSlot

    /// Sends `response` (unless the request was answered already). Returns whether it was this call
    /// that answered.
    @discardableResult
    package func respond(_ response: HTTPResponse) -> Bool {
        slot.fulfill(response)
    }
}
