import PulseTestSupport

/// Posts `body` to `http://127.0.0.1:port/path` over a raw socket on a thread of its own and returns
/// the status code and response body (the request asks the server to close the connection).
func httpPost(port: Int, path: String, body: [UInt8]) async -> (status: Int, body: [UInt8])? {
    guard
        let response = try? await RawHTTPConnection.exchange(
            port: port, method: "POST", target: path,
            headers: [("Content-Type", "application/json"), ("Connection", "close")], body: body)
    else { return nil }
    return (response.status, response.body)
}
