import PulseJSON

/// What one connected client answered to a control RPC sent by ``IngestServer/sendControl(app:route:arguments:timeout:)``.
public struct IngestControlOutcome: Sendable, Equatable {
    /// The client's connection ID.
    public var connectionId: String
    /// The response envelope's `code`, or `nil` when no valid response arrived.
    public var code: Int?
    /// The response envelope's `msg`.
    public var message: String?
    /// The response envelope's `data`.
    public var data: JSONValue?
    /// Why no valid response arrived (timeout, connection closed, unparseable payload), else `nil`.
    public var failure: String?

    /// Creates an outcome.
    public init(
        connectionId: String, code: Int? = nil, message: String? = nil, data: JSONValue? = nil, failure: String? = nil
    ) {
        self.connectionId = connectionId
        self.code = code
        self.message = message
        self.data = data
        self.failure = failure
    }
}
