import OTLPProtobuf
import PulseJSON

/// What a response (or a failure to get one) means for the batch that was sent.
enum UploadOutcome: Sendable, Equatable {
    /// 2xx: stored (a duplicate included). Delete the batch.
    case delivered(duplicate: Bool)
    /// 2xx with OTLP partial success: delete the batch and count the rejected records.
    case partiallyDelivered(rejected: Int64, message: String?)
    /// 400, 413, 415: can never succeed. Drop the batch and count it.
    case rejected(status: Int)
    /// 401, 403: hold the whole queue and ask for a policy refresh.
    case authenticationRequired(status: Int)
    /// 429, 503 with a usable `Retry-After`: hold the whole queue until then.
    case throttled(status: Int, delayMilliseconds: Int64)
    /// Anything else, or no response at all: retry after a jittered backoff — of the endpoint for
    /// ``isEndpointFailure``, else of this batch alone.
    case retryable(status: Int?, message: String)

    /// Whether the failure is the endpoint's rather than the batch's: no answer at all, 408, 429 or a 5xx
    /// without a usable `Retry-After`. The endpoint backs off (every batch waits), instead of the batch.
    var isEndpointFailure: Bool {
        guard case .retryable(let status, _) = self else { return false }
        guard let status else { return true }
        return status == 408 || status == 429 || (500..<600).contains(status)
    }

    /// Classifies a response to a batch of `signal`.
    static func classify(_ response: UploadResponse, signal: Signal, now: Int64) -> UploadOutcome {
        let status = response.status
        switch status {
        case 200..<300:
            let duplicate = response.headers["apsio-duplicate"]?.lowercased() == "true"
            if let (rejected, message) = partialSuccess(response.body, signal: signal), rejected > 0 {
                return .partiallyDelivered(rejected: rejected, message: message)
            }
            return .delivered(duplicate: duplicate)
        case 400, 413, 415:
            return .rejected(status: status)
        case 401, 403:
            return .authenticationRequired(status: status)
        case 429, 503:
            if let delay = RetryAfter.delayMilliseconds(response.headers["retry-after"], now: now) {
                return .throttled(status: status, delayMilliseconds: delay)
            }
            return .retryable(status: status, message: "HTTP \(status) without a usable Retry-After")
        default:
            return .retryable(status: status, message: "HTTP \(status)")
        }
    }

    /// The rejected count and message of an OTLP JSON partial-success body, if it has one.
    static func partialSuccess(_ body: [UInt8], signal: Signal) -> (Int64, String?)? {
        guard !body.isEmpty, body.count <= 1 << 20, let document = try? JSONParser().parse(body),
            let partial = document.root["partialSuccess"]
        else { return nil }
        let key: String
        switch signal {
        case .logs: key = "rejectedLogRecords"
        case .traces: key = "rejectedSpans"
        case .metrics: key = "rejectedDataPoints"
        }
        var rejected: Int64 = 0
        if let node = partial[key] {
            // int64 is a decimal string in the JSON mapping; accept a number too.
            rejected = node.int64 ?? node.string.flatMap { Int64($0) } ?? 0
        }
        return (rejected, partial["errorMessage"]?.string)
    }
}
