package import MsgTrans
package import PulseProtocol

/// Settings of a ``PulseClientSession``. Every default is the PulseKit SDK's.
package struct PulseClientConfiguration: Sendable {
    /// The server's host: a numeric IPv4/IPv6 address or a name. Default `127.0.0.1`.
    package var host: String
    /// The server's TCP port. Default 6000.
    package var port: Int
    /// The identity sent as CLIENT_CONNECT on every connection. It is immutable for a connection's
    /// lifetime on the server, so one session serves exactly one identity.
    package var identity: ConnectRequest
    /// The deadline of every request, including its wait for an in-flight slot. Default 15 s.
    package var requestTimeout: Duration
    /// How long a TCP connect may take. Default 10 s.
    package var connectTimeout: Duration
    /// Requests awaiting a response at once; further requests wait (within their deadline). Default 8.
    package var maxInFlightRequests: Int
    /// The codec for payloads of at least ``compressionMinBytes`` bytes. CLIENT_CONNECT,
    /// CLIENT_HEARTBEAT and CLIENT_APP_UPDATE_CHECK are always sent uncompressed. Default zstd.
    package var compression: Compression
    /// Smaller payloads are sent uncompressed. Default 1024.
    package var compressionMinBytes: Int
    /// Backoff, jitter and the attempt window of reconnection.
    package var reconnectPolicy: PulseReconnectPolicy
    /// Whether a lost or failed connection is re-established in the background (after the backoff)
    /// instead of on the next request. Background reconnection starts only after the first request
    /// or ``PulseClientSession/connect()``. Default `true`.
    package var keepConnected: Bool
    /// Called once per connection attempt (TCP connect plus CLIENT_CONNECT) when it ends, with its
    /// outcome: success, or the `connectFailed`, `connectRejected`, `timeout`… error. Attempts
    /// abandoned because the session closed are not reported. Runs on the connecting task; it must
    /// be fast. Default `nil`.
    package var handshakeObserver: (@Sendable (Result<Void, PulseClientError>) -> Void)?

    /// Creates a configuration with the documented defaults.
    package init(host: String = "127.0.0.1", port: Int = 6000, identity: ConnectRequest) {
        self.host = host
        self.port = port
        self.identity = identity
        requestTimeout = .seconds(15)
        connectTimeout = .seconds(10)
        maxInFlightRequests = 8
        compression = .zstd
        compressionMinBytes = CompressionPolicy.defaultCompressionMinBytes
        reconnectPolicy = PulseReconnectPolicy()
        keepConnected = true
    }
}
