import Synchronization

/// Counters of a server (all its connections) or of client connections that share them.
///
/// Counters only grow, except ``Snapshot/openConnections``. They are relaxed atomics, updated
/// where the event happens (mostly the event loop thread) and readable from any thread with
/// ``snapshot()``.
package final class MsgTransStatistics: Sendable {
    /// The counters at one moment.
    package struct Snapshot: Sendable, Equatable {
        /// Connections currently open (a gauge).
        package var openConnections: Int
        /// Connections accepted by a server or established by connect.
        package var acceptedConnections: Int
        /// Connections a server closed at once because it was at its connection limit.
        package var rejectedConnections: Int
        /// Frames decoded from peers.
        package var framesIn: Int
        /// Frames queued for peers.
        package var framesOut: Int
        /// Bytes read from sockets.
        package var bytesIn: Int
        /// Bytes written to sockets.
        package var bytesOut: Int
        /// Connections closed because the peer broke the framing rules (including a frame cut off by the close).
        package var protocolFaults: Int
        /// Responses whose message id matched no waiting request: unknown, duplicate or late (after timeout or cancellation). They never reach a handler.
        package var unmatchedResponses: Int
        /// Responses accepted although their biz type differs from the request's (msgtrans-rust answers with 0).
        package var bizTypeMismatches: Int
        /// Requests that failed with a timeout.
        package var requestTimeouts: Int
        /// Requests answered by the overload responder.
        package var overloadReplies: Int
        /// Requests answered by the failure responder (handler failed, payload malformed, no handler).
        package var failureReplies: Int
        /// Messages answered directly by the admission hook.
        package var admissionReplies: Int
        /// Connections closed by the admission hook.
        package var admissionCloses: Int
        /// Messages dropped by the admission hook.
        package var ignoredMessages: Int
        /// One-way messages dropped because the inbound bound was reached or their payload was malformed.
        package var droppedOneWays: Int
        /// Bytes of incomplete inbound frames buffered across the connections (a gauge; tracked
        /// on server connections, see ``MsgTransServerConfiguration/maxPartialFrameBytes``).
        package var partialFrameBytes: Int
        /// Connections closed because they were not established in time
        /// (``MsgTransServerConfiguration/establishTimeout``).
        package var establishTimeouts: Int
        /// Connections closed because their incomplete frame would have taken the buffered total
        /// over ``MsgTransServerConfiguration/maxPartialFrameBytes``.
        package var partialFrameCapCloses: Int
        /// Outbound requests waiting on this side for an in-flight slot
        /// (``MsgTransConfiguration/maxOutstandingRequests``) or for output space (a gauge).
        package var waitingRequests: Int
        /// Connections that stopped reading because their outbound buffer is full and their socket
        /// takes no more: back-pressured until the peer reads (a gauge).
        package var backPressuredConnections: Int
    }

    enum Counter {
        case openConnections
        case acceptedConnections
        case rejectedConnections
        case framesIn
        case framesOut
        case bytesIn
        case bytesOut
        case protocolFaults
        case unmatchedResponses
        case bizTypeMismatches
        case requestTimeouts
        case overloadReplies
        case failureReplies
        case admissionReplies
        case admissionCloses
        case ignoredMessages
        case droppedOneWays
        case partialFrameBytes
        case establishTimeouts
        case partialFrameCapCloses
        case waitingRequests
        case backPressuredConnections
    }

    private let openConnections = Atomic<Int>(0)
    private let acceptedConnections = Atomic<Int>(0)
    private let rejectedConnections = Atomic<Int>(0)
    private let framesIn = Atomic<Int>(0)
    private let framesOut = Atomic<Int>(0)
    private let bytesIn = Atomic<Int>(0)
    private let bytesOut = Atomic<Int>(0)
    private let protocolFaults = Atomic<Int>(0)
    private let unmatchedResponses = Atomic<Int>(0)
    private let bizTypeMismatches = Atomic<Int>(0)
    private let requestTimeouts = Atomic<Int>(0)
    private let overloadReplies = Atomic<Int>(0)
    private let failureReplies = Atomic<Int>(0)
    private let admissionReplies = Atomic<Int>(0)
    private let admissionCloses = Atomic<Int>(0)
    private let ignoredMessages = Atomic<Int>(0)
    private let droppedOneWays = Atomic<Int>(0)
    private let partialFrameBytes = Atomic<Int>(0)
    private let establishTimeouts = Atomic<Int>(0)
    private let partialFrameCapCloses = Atomic<Int>(0)
    private let waitingRequests = Atomic<Int>(0)
    private let backPressuredConnections = Atomic<Int>(0)

    /// Creates zeroed counters.
    package init() {}

    /// The current values.
    package func snapshot() -> Snapshot {
        Snapshot(
            openConnections: openConnections.load(ordering: .relaxed),
            acceptedConnections: acceptedConnections.load(ordering: .relaxed),
            rejectedConnections: rejectedConnections.load(ordering: .relaxed),
            framesIn: framesIn.load(ordering: .relaxed),
            framesOut: framesOut.load(ordering: .relaxed),
            bytesIn: bytesIn.load(ordering: .relaxed),
            bytesOut: bytesOut.load(ordering: .relaxed),
            protocolFaults: protocolFaults.load(ordering: .relaxed),
            unmatchedResponses: unmatchedResponses.load(ordering: .relaxed),
            bizTypeMismatches: bizTypeMismatches.load(ordering: .relaxed),
            requestTimeouts: requestTimeouts.load(ordering: .relaxed),
            overloadReplies: overloadReplies.load(ordering: .relaxed),
            failureReplies: failureReplies.load(ordering: .relaxed),
            admissionReplies: admissionReplies.load(ordering: .relaxed),
            admissionCloses: admissionCloses.load(ordering: .relaxed),
            ignoredMessages: ignoredMessages.load(ordering: .relaxed),
            droppedOneWays: droppedOneWays.load(ordering: .relaxed),
            partialFrameBytes: partialFrameBytes.load(ordering: .relaxed),
            establishTimeouts: establishTimeouts.load(ordering: .relaxed),
            partialFrameCapCloses: partialFrameCapCloses.load(ordering: .relaxed),
            waitingRequests: waitingRequests.load(ordering: .relaxed),
            backPressuredConnections: backPressuredConnections.load(ordering: .relaxed))
    }

    func add(_ counter: Counter, _ amount: Int = 1) {
        switch counter {
        case .openConnections: openConnections.wrappingAdd(amount, ordering: .relaxed)
        case .acceptedConnections: acceptedConnections.wrappingAdd(amount, ordering: .relaxed)
        case .rejectedConnections: rejectedConnections.wrappingAdd(amount, ordering: .relaxed)
        case .framesIn: framesIn.wrappingAdd(amount, ordering: .relaxed)
        case .framesOut: framesOut.wrappingAdd(amount, ordering: .relaxed)
        case .bytesIn: bytesIn.wrappingAdd(amount, ordering: .relaxed)
        case .bytesOut: bytesOut.wrappingAdd(amount, ordering: .relaxed)
        case .protocolFaults: protocolFaults.wrappingAdd(amount, ordering: .relaxed)
        case .unmatchedResponses: unmatchedResponses.wrappingAdd(amount, ordering: .relaxed)
        case .bizTypeMismatches: bizTypeMismatches.wrappingAdd(amount, ordering: .relaxed)
        case .requestTimeouts: requestTimeouts.wrappingAdd(amount, ordering: .relaxed)
        case .overloadReplies: overloadReplies.wrappingAdd(amount, ordering: .relaxed)
        case .failureReplies: failureReplies.wrappingAdd(amount, ordering: .relaxed)
        case .admissionReplies: admissionReplies.wrappingAdd(amount, ordering: .relaxed)
        case .admissionCloses: admissionCloses.wrappingAdd(amount, ordering: .relaxed)
        case .ignoredMessages: ignoredMessages.wrappingAdd(amount, ordering: .relaxed)
        case .droppedOneWays: droppedOneWays.wrappingAdd(amount, ordering: .relaxed)
        case .partialFrameBytes: partialFrameBytes.wrappingAdd(amount, ordering: .relaxed)
        case .establishTimeouts: establishTimeouts.wrappingAdd(amount, ordering: .relaxed)
        case .partialFrameCapCloses: partialFrameCapCloses.wrappingAdd(amount, ordering: .relaxed)
        case .waitingRequests: waitingRequests.wrappingAdd(amount, ordering: .relaxed)
        case .backPressuredConnections: backPressuredConnections.wrappingAdd(amount, ordering: .relaxed)
        }
    }

    /// Adds `amount` to the buffered partial-frame bytes and returns the new total.
    func addPartialFrameBytes(_ amount: Int) -> Int {
        partialFrameBytes.wrappingAdd(amount, ordering: .relaxed).newValue
    }
}
