import MsgTrans
import MsgTransRuntime
import PulseKit
import PulseProtocol
import PulseStorage
import Synchronization

/// State shared by every session of one server: store, registry, policy, counters, queue.
final class IngestCore: Sendable {
    /// The server side of the registry: every allocated type is implemented.
    static let profile = PulsePeerProfile(
        role: .server,
        implemented: [
            .clientConnect, .clientHeartbeat, .clientConfigPull, .clientCrashBatchUpload, .clientEventBatchUpload,
            .clientAppUpdateCheck, .bidirectionalControlRPC,
        ])

    let store: IngestStore
    let registry = SessionRegistry()
    let counters = IngestCounters()
    let pending: PendingBatches
    let clock: PulseClock
    let presenceTTLMs: Int64
    let droppedLogLines: @Sendable () -> Int
    /// The one payload limit: the largest plaintext payload, in bytes, whether it arrived plain or
    /// compressed (``IngestConfiguration/transport``'s `connection.frameLimits.maxDecompressedBytes`, 16 MiB
    /// by default). Decompression stops at it; a plain payload above it is refused the same way.
    let maxPayloadBytes: Int
    private let currentPolicy: Mutex<IngestPolicy>
    private let background = BackgroundWork()

    init(configuration: IngestConfiguration, store: IngestStore) {
        self.store = store
        pending = PendingBatches(capacity: configuration.maxPendingBatches)
        clock = configuration.clock
        presenceTTLMs = configuration.presenceTTLMs
        droppedLogLines = configuration.droppedLogLines
        maxPayloadBytes = Self.maxPayloadBytes(configuration)
        currentPolicy = Mutex(configuration.policy)
    }

    /// The payload limit of a configuration (see ``maxPayloadBytes``).
    static func maxPayloadBytes(_ configuration: IngestConfiguration) -> Int {
        max(configuration.transport.connection.frameLimits.maxDecompressedBytes, 0)
    }

    /// The 400 message for a payload over the limit, plain or compressed.
    static func payloadTooLargeMessage(_ limit: Int) -> String {
        "payload larger than \(limit) bytes (uncompressed)"
    }

    /// The policy in force now.
    var policy: IngestPolicy {
        currentPolicy.withLock { $0 }
    }

    /// Replaces the policy (see ``IngestPolicy/succeeding(_:)``) and returns the apps whose revision
    /// changed.
    func replacePolicy(_ policy: IngestPolicy) -> [String] {
        currentPolicy.withLock { current in
            let (next, changed) = policy.succeeding(current)
            current = next
            return changed
        }
    }

    /// A reply for a request that is refused, counted by code.
    func reject(_ code: PulseResponseCode, _ message: String) -> MsgTransReply {
        counters.recordRejection(code: code.rawValue)
        return Envelope.failure(code, message)
    }

    /// Runs `work` in the background; ``drainBackground()`` waits for everything started so far.
    func runInBackground(_ work: @escaping @Sendable () async -> Void) {
        background.run(work)
    }

    /// Waits until background work (connection-close records) has finished.
    func drainBackground() async {
        await background.drain()
    }
}

/// Tracks unstructured background tasks so shutdown can wait for them.
private final class BackgroundWork: Sendable {
    private struct State {
        var running = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func run(_ work: @escaping @Sendable () async -> Void) {
        state.withLock { $0.running += 1 }
        Task {
            await work()
            let waiters = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.running -= 1
                guard state.running == 0 else { return [] }
                let waiters = state.waiters
                state.waiters = []
                return waiters
            }
            for waiter in waiters {
                waiter.resume()
            }
        }
    }

    func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                if state.running == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle {
                continuation.resume()
            }
        }
    }
}
