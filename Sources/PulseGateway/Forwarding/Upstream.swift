/// The Pulse operations the forwarder sends (biz_type values of Pulse protocol version 2).
///
/// Kept local until the shared registry (`PulseProtocol.PulseBizType`) is on main; the values are
/// permanent by contract, so switching is a rename.
enum UpstreamOperation: UInt8, Sendable, CustomStringConvertible {
    case connect = 1
    case heartbeat = 2
    case configPull = 3
    case crashBatchUpload = 4
    case eventBatchUpload = 5

    var description: String {
        switch self {
        case .connect: return "CLIENT_CONNECT"
        case .heartbeat: return "CLIENT_HEARTBEAT"
        case .configPull: return "CLIENT_CONFIG_PULL"
        case .crashBatchUpload: return "CLIENT_CRASH_BATCH_UPLOAD"
        case .eventBatchUpload: return "CLIENT_EVENT_BATCH_UPLOAD"
        }
    }
}

/// A Pulse response envelope as the forwarder needs it.
struct UpstreamReply: Sendable, Equatable {
    /// The envelope's `code` (0 when missing).
    var code: Int
    /// Whether `data` is exactly `true`.
    var dataIsTrue: Bool
    /// The envelope's `msg`.
    var message: String?

    /// `code == 0 && data == true`: the only answer that lets the forwarder delete a row.
    var confirmsAcceptance: Bool { code == 0 && dataIsTrue }
}

/// Why an upstream exchange did not produce a response.
struct UpstreamFailure: Error, Sendable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        /// Connect failure, timeout, disconnect, protocol violation: no response; retry later.
        case transport
        /// CLIENT_CONNECT was answered with a non-zero code.
        case connectRejected(code: Int)
    }

    var kind: Kind
    var message: String

    var description: String { message }
}

/// A connection bound to one device identity by a successful CLIENT_CONNECT.
protocol UpstreamSession: AnyObject, Sendable {
    /// Sends a request and decodes the response envelope.
    func request(_ operation: UpstreamOperation, payload: [UInt8], compression: UInt8) async throws(UpstreamFailure)
        -> UpstreamReply
    /// Whether the connection is still usable.
    var isOpen: Bool { get }
    /// Set after the upstream answered 501 to a crash upload on this connection.
    var lacksCrashUpload: Bool { get set }
    /// Closes the connection.
    func close() async
}

/// Opens sessions: the seam between the forwarder and the transport (today MsgTransRuntime and
/// the gateway's own CONNECT/heartbeat handling; later the shared Pulse client session module).
protocol UpstreamConnector: Sendable {
    /// Connects and sends `connectPayload` as CLIENT_CONNECT; returns once the upstream accepted it.
    func open(connectPayload: [UInt8]) async throws(UpstreamFailure) -> any UpstreamSession
}
