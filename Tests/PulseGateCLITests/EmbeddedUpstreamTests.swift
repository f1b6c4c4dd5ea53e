import Foundation
import PulseGateway
import PulseIngest
import Testing

@testable import PulseGateCLI

#if canImport(Glibc)
    import Glibc
#endif

/// `pulsegate serve` without `--upstream`: the gateway forwards to the embedded ingest server,
/// end to end over loopback.
@Suite struct EmbeddedUpstreamTests {
    static let example: [UInt8] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../docs/examples/otlp-logs.json").standardized
        return [UInt8](try! Data(contentsOf: url))
    }()

    @Test func batchPostedToGatewayLandsInEmbeddedIngestOnce() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("pulsegate-e2e-\(UInt64.random(in: 0...UInt64.max))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let system = try await GatewaySystem.start(GatewayConfiguration(dataDirectory: directory, listenPort: 0))
        let ingest = try #require(system.embeddedIngest)
        let headers = ["Content-Type": "application/json", "Apsio-App-Id": "shop-ios", "Apsio-Batch-Id": "e2e-0001"]

        let first = try postHTTP(port: system.gateway.httpPort, path: "/v1/logs", headers: headers, body: Self.example)
        #expect(first.status == 200)
        #expect(first.body == "{}")

        // The forwarder delivers asynchronously; wait (bounded) until the 20 records arrived.
        var events: [IngestedEvent] = []
        for _ in 0..<200 {
            events = try await ingest.events(app: "shop-ios", limit: 100)
            if events.count >= 20 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(events.count == 20)
        #expect(Set(events.map(\.eventId)).count == 20)
        #expect(Set(events.map(\.deviceId)) == ["6F1C2A9E-0B7D-4E2B-9F4A-3E1D2C0B9A87"])
        #expect(Set(events.map(\.installationId)) == ["inst-5b1c9e"])
        let kinds = Set(events.map(\.kind))
        #expect(
            kinds.isSubset(of: [
                "Analytics", "Crash", "Error", "Log", "Network", "Performance", "Runtime", "Breadcrumb",
            ]))

        // A retry of the same batch is a duplicate: answered 200, stored once.
        let retry = try postHTTP(port: system.gateway.httpPort, path: "/v1/logs", headers: headers, body: Self.example)
        #expect(retry.status == 200)
        #expect(retry.headers["apsio-duplicate"] == "true")
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await ingest.events(app: "shop-ios", limit: 100).count == 20)
        await system.shutdown()
    }

    @Test func explicitUpstreamStartsNoEmbeddedServer() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("pulsegate-e2e-\(UInt64.random(in: 0...UInt64.max))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = GatewayConfiguration(dataDirectory: directory, listenPort: 0)
        configuration.upstream = UpstreamAddress(host: "127.0.0.1", port: 9)
        let system = try await GatewaySystem.start(configuration)
        #expect(system.embeddedIngest == nil)
        await system.shutdown()
    }
}

/// A minimal blocking HTTP/1.1 client for loopback tests (one request, `Connection: close`).
func postHTTP(port: Int, path: String, headers: [String: String], body: [UInt8]) throws -> (
    status: Int, headers: [String: String], body: String
) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #expect(fd >= 0)
    defer { close(fd) }
    var timeout = timeval(tv_sec: 20, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    try #require(connected == 0)
    var head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
    for (name, value) in headers { head += "\(name): \(value)\r\n" }
    let request = Array((head + "\r\n").utf8) + body
    var sent = 0
    while sent < request.count {
        let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        try #require(n > 0)
        sent += n
    }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = recv(fd, &buffer, buffer.count, 0)
        if n <= 0 { break }
        response += buffer[0..<n]
    }
    let text = String(decoding: response, as: UTF8.self)
    let parts = text.components(separatedBy: "\r\n\r\n")
    let lines = parts[0].components(separatedBy: "\r\n")
    let status = Int(lines[0].split(separator: " ")[1]) ?? 0
    var responseHeaders: [String: String] = [:]
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        responseHeaders[line[..<colon].lowercased()] = line[line.index(after: colon)...]
            .trimmingCharacters(in: .whitespaces)
    }
    return (status, responseHeaders, parts.dropFirst().joined(separator: "\r\n\r\n"))
}
