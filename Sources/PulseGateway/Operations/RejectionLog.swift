import PulseKit
import Synchronization

/// Explains every refused or partly refused request once, at `info`, and keeps the latest ones for
/// the status page.
///
/// The line carries what the client was told and who it was:
///
/// ```json
/// {"ts":"…","level":"info","msg":"request refused","requestId":"4bf…","app":"shop","route":"/v1/logs","status":"415","reason":"Content-Type text/plain is not supported; send application/json or application/x-protobuf","client":"198.51.100.7","suppressed":"0"}
/// ```
///
/// `reason` is the message of the response body (for a partly refused request, the
/// `partialSuccess` `errorMessage`), `client` the address after trusted proxies. At most one line
/// per (app, reason) is written per ``intervalMilliseconds`` (``LogRateLimiter``); the next line that
/// passes says in `suppressed` how many were held back, so a device stuck in a retry loop cannot
/// fill the disk.
final class RejectionLog: Sendable {
    /// Interval between lines of one (app, reason).
    static let intervalMilliseconds: Int64 = 60_000
    /// Rejections kept for the status page.
    static let recentCapacity = 20

    /// One refused request.
    struct Entry: Sendable, Equatable {
        /// When it was answered, epoch milliseconds.
        var at: Int64
        var requestID: String
        /// The App ID, `-` when the request had none that was well-formed.
        var app: String
        var route: String
        var status: Int
        var reason: String
        var client: String
        /// Answered 200 with `partialSuccess` (some records dropped).
        var partial: Bool
    }

    private let logger: GatewayLogger
    private let clock: PulseClock
    private let limiter: LogRateLimiter
    private let latest = Mutex<[Entry]>([])

    init(logger: GatewayLogger, clock: PulseClock) {
        self.logger = logger
        self.clock = clock
        limiter = LogRateLimiter(intervalMilliseconds: Self.intervalMilliseconds, clock: clock)
    }

    /// Records and (rate permitting) logs a refused request. `limitKey` replaces `reason` as the
    /// rate limit's key when the reason embeds what the client chose (the path of a 404).
    func record(
        requestID: RequestID, app: String?, route: String, status: Int, reason: String, client: String,
        partial: Bool = false, limitKey: String? = nil
    ) {
        let entry = Entry(
            at: clock.wallClockMilliseconds(), requestID: requestID.value, app: app ?? "-", route: route,
            status: status,
            reason: reason, client: client, partial: partial)
        latest.withLock { entries in
            entries.insert(entry, at: 0)
            if entries.count > Self.recentCapacity { entries.removeLast() }
        }
        guard let suppressed = limiter.admit(entry.app + "\u{0}" + (limitKey ?? reason)) else { return }
        logger.info(
            partial ? "request partly refused" : "request refused",
            [
                "requestId": entry.requestID, "app": entry.app, "route": route, "status": String(status),
                "reason": reason, "client": client, "suppressed": String(suppressed),
            ])
    }

    /// The latest refused requests, newest first.
    var recent: [Entry] { latest.withLock { $0 } }
}
