import Foundation
import PulseTestSupport

/// A minimal HTTP/1.1 client over a raw socket for the admin endpoint.
enum HTTPProbe {
    struct Reply: @unchecked Sendable {
        var status: Int
        var body: [UInt8]
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(body)) }
        var object: [String: Any] { (json as? [String: Any]) ?? [:] }
    }

    /// One request on a connection of its own (`Connection: close`); `nil` when the endpoint does
    /// not answer with a complete response.
    static func send(port: Int, method: String = "GET", path: String, body: String? = nil) async -> Reply? {
        var headers = [("Connection", "close")]
        if body != nil {
            headers.append(("Content-Type", "application/json"))
        }
        guard
            let response = try? await RawHTTPConnection.exchange(
                port: port, method: method, target: path, headers: headers, body: Array((body ?? "").utf8),
                receiveTimeoutSeconds: 20)
        else { return nil }
        return Reply(status: response.status, body: response.body)
    }
}
