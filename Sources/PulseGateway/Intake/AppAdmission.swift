import PulseHTTP
import PulseKit
import Synchronization

/// The per-app admission check of the intake (``AppLimits``): an app over its outbox share, or
/// over its request rate, gets 429 with `Retry-After`; other apps are not affected.
///
/// The outbox share is read from the store's in-memory per-app counts (no database access per
/// request) plus the app's requests admitted and not yet finished (each counts as one batch and
/// its wire body's bytes until its commit is counted in the store), so concurrent requests cannot
/// all slip under the share before the first commits; one request may still add several batches. The rate is a token bucket per app on the injected monotonic ``PulseClock``: it
/// holds up to the limit's `burst` tokens, refills at `requestsPerSecond`, and each admitted
/// request takes one. A refused request takes none. At most ``maxBuckets`` buckets are kept;
/// when full, buckets that have refilled completely (the same as new ones) are dropped, and if
/// none has, a new app is refused until one does — so a stream of made-up App IDs cannot grow
/// memory. A reload that changes an app's rate keeps its tokens (capped at the new burst).
final class AppAdmission: Sendable {
    /// Token buckets kept at once.
    static let maxBuckets = 4_096

    private struct Bucket {
        var tokens: Double
        var updatedAt: Int64
        var rate: Double
        var size: Double

        /// Whether it would be full at `now` (then it is the same as a new bucket).
        func isFull(at now: Int64) -> Bool {
            tokens + Double(max(0, now - updatedAt)) / 1_000 * rate >= size
        }
    }

    /// Why a request was refused, for `pulsegate_app_limited_total{reason}`.
    enum Reason: String, Sendable {
        case outboxBatches = "outbox_batches"
        case outboxBytes = "outbox_bytes"
        case rate
    }

    private let clock: PulseClock
    private let buckets = Mutex<[String: Bucket]>([:])
    /// Admitted requests not yet finished, per app: their count and wire bytes.
    private let inFlight = Mutex<[String: GatewayStore.AppDepth]>([:])

    /// An admitted request; ``release()`` it once its commit is counted in the store (or failed).
    struct Ticket: Sendable {
        fileprivate let admission: AppAdmission?
        fileprivate let app: String
        fileprivate let bytes: Int

        /// Ends the request's claim on its app's share.
        func release() {
            admission?.inFlight.withLock { inFlight in
                guard var entry = inFlight[app] else { return }
                entry.rows -= 1
                entry.bytes -= bytes
                inFlight[app] = entry.rows > 0 ? entry : nil
            }
        }
    }

    /// - Parameter clock: monotonic milliseconds (``GatewayEnvironment/clock``'s monotonic timeline).
    init(clock: PulseClock) {
        self.clock = clock
    }

    /// Admits a request of `app` with a wire body of `bytes`, or throws the 429 and calls `refused`
    /// with the reason.
    func admit(
        app: String, bytes: Int = 0, policy: GatewayPolicy, depth: GatewayStore.AppDepth,
        refused: (Reason) -> Void
    ) throws(IntakeRejection) -> Ticket {
        let limit = policy.appLimits.limit(for: app)
        let shared = limit.outboxBatches != nil || limit.outboxBytes != nil
        if shared {
            let reason = inFlight.withLock { inFlight -> Reason? in
                var claimed = inFlight[app] ?? GatewayStore.AppDepth()
                if let batches = limit.outboxBatches, depth.rows + claimed.rows >= batches { return .outboxBatches }
                if let share = limit.outboxBytes, depth.bytes + claimed.bytes >= share { return .outboxBytes }
                claimed.rows += 1
                claimed.bytes += bytes
                inFlight[app] = claimed
                return nil
            }
            if let reason {
                refused(reason)
                throw Self.outboxRejection(app, policy)
            }
        }
        let ticket = Ticket(admission: shared ? self : nil, app: app, bytes: bytes)
        guard let rate = limit.requestsPerSecond else { return ticket }
        if let wait = take(app: app, rate: rate, size: limit.bucketSize) {
            ticket.release()
            refused(.rate)
            throw IntakeRejection(
                .tooManyRequests, "app \(app) is over its request rate (\(rate) per second); retry later",
                retryAfterSeconds: wait)
        }
        return ticket
    }

    private static func outboxRejection(_ app: String, _ policy: GatewayPolicy) -> IntakeRejection {
        IntakeRejection(
            .tooManyRequests, "app \(app) has its share of the outbox waiting; retry later",
            retryAfterSeconds: policy.retryAfterSeconds)
    }

    /// Takes a token of `app`'s bucket; `nil` when taken, else the whole seconds until one is there.
    private func take(app: String, rate: Double, size: Double) -> Int? {
        let now = clock.monotonicMilliseconds()
        return buckets.withLock { buckets -> Int? in
            var bucket: Bucket
            if let existing = buckets[app] {
                bucket = existing
                let elapsed = Double(max(0, now - bucket.updatedAt)) / 1_000
                bucket.tokens = min(size, bucket.tokens + elapsed * rate)
            } else {
                if buckets.count >= Self.maxBuckets {
                    // Full buckets behave exactly like new ones: forget them.
                    buckets = buckets.filter { !$0.value.isFull(at: now) }
                }
                guard buckets.count < Self.maxBuckets else { return max(1, Int((1 / rate).rounded(.up))) }
                bucket = Bucket(tokens: size, updatedAt: now, rate: rate, size: size)
            }
            bucket.updatedAt = now
            bucket.rate = rate
            bucket.size = size
            guard bucket.tokens >= 1 else {
                buckets[app] = bucket
                return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
            }
            bucket.tokens -= 1
            buckets[app] = bucket
            return nil
        }
    }
}
