/// One HTTP request: the POST of a sealed batch, or the GET of the policy.
public struct UploadRequest: Sendable {
    /// The HTTP method: `POST` (with ``body``) or `GET` (without).
    public var method: String
    /// The full URL, e.g. `http://127.0.0.1:4318/v1/logs`.
    public var url: String
    /// Request headers, in order (`Apsio-Batch-Id`, `Apsio-App-Id`, `Apsio-Sent-At`, `Content-Type`,
    /// `Content-Encoding`).
    public var headers: [(name: String, value: String)]
    /// The stored, compressed batch body.
    public var body: [UInt8]

    /// Creates a request.
    public init(method: String = "POST", url: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }
}

/// The gateway's answer.
public struct UploadResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Response headers with lower-cased names (the last value wins for repeated names).
    public var headers: [String: String]
    /// The response body (bounded by the transport).
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        var lowered: [String: String] = [:]
        for (name, value) in headers {
            lowered[name.lowercased()] = value
        }
        self.headers = lowered
        self.body = body
    }
}

/// Sends upload requests. The uploader is generic over it so tests, other HTTP stacks (URLSession, OkHttp
/// through a bridge) and the real gateway can all stand behind it.
///
/// Implementations must not block Swift's cooperative thread pool: run blocking I/O on threads they own.
public protocol UploadTransport: Sendable {
    /// Sends `request` and returns the response, whatever its status.
    ///
    /// - Throws: ``UploaderError`` with ``UploaderError/Code/network`` when no response arrived (connection
    ///   refused or dropped, timeout, TLS failure).
    func send(_ request: UploadRequest) async throws(UploaderError) -> UploadResponse
}
