extension RawHTTPConnection {
    /// Sends one request on a connection of its own, off the cooperative pool, and reads the
    /// response (only its head for `HEAD`); the connection is closed afterwards.
    package static func exchange(
        host: String = "127.0.0.1", port: Int, method: String = "GET", target: String,
        headers: [(String, String)] = [], body: [UInt8] = [], receiveTimeoutSeconds: Int = 15
    ) async throws -> RawHTTPResponse {
        try await onThread {
            let connection = try RawHTTPConnection(host: host, port: port, receiveTimeoutSeconds: receiveTimeoutSeconds)
            defer { connection.close() }
            try connection.sendRequest(method: method, target: target, headers: headers, body: body)
            return try connection.readResponse(forHead: method == "HEAD")
        }
    }

    /// Sends `raw` (a hand-written request, or the start of one) on a connection of its own and
    /// reads the one response it gets.
    package static func exchange(port: Int, raw: String, receiveTimeoutSeconds: Int = 15) async throws
        -> RawHTTPResponse
    {
        try await onThread {
            let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: receiveTimeoutSeconds)
            defer { connection.close() }
            try connection.send(raw)
            return try connection.readResponse()
        }
    }
}
