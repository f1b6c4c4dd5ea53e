package import PulseJSON

/// What one connected client answered to a control RPC sent by ``IngestServer/sendControl(app:route:arguments:timeout:)``.
package struct IngestControlOutcome: Sendable, Equatable {
    /// The client's connection ID.
    package var connectionId: String
    /// The response envelope's `code`, or `nil` when no valid response arrived.
    package var code: Int?
    /// The response envelope's `msg`.
    package var message: String?
    /// The response envelope's `data`.
    package var data: JSONValue?
    /// Why no valid response arrived (timeout, connection closed, unparseable payload), else `nil`.
    package var failure: String?

    /// Creates an outcome.
    package init(
        connectionId: String, code: Int? = nil, message: String? = nil, data: JSONValue? = nil, failure: String? = nil
    ) {
        self.connectionId = connectionId
        self.code = code
        self.message = message
        self.data = data
        self.failure = failure
    }
}
