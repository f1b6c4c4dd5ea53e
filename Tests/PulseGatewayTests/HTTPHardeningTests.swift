import Foundation
import Glibc
import PulseStorage
import PulseTestSupport
import Testing

@testable import PulseGateway

/// The HTTP hardening seen through the real gateway: smuggled requests are not stored, and the
/// read deadlines are configurable from the config file.
@Suite struct HTTPHardeningTests {
    static let body = OTLP.logs(records: [
        OTLP.record(1_700_000_000, attributes: [OTLP.string("log.record.uid", "u-1")])
    ])

    static func outboxRows(in directory: TemporaryDirectory) throws -> Int {
        let connection = try SQLiteConnection(path: directory.path + "/" + GatewayStore.fileName)
        return try connection.queryFirst("SELECT count(*) FROM outbox") { try $0.column(0, as: Int.self) } ?? -1
    }

    /// A POST hidden behind each smuggling shape: the outer request is refused with 400 and the
    /// hidden batch is never stored.
    @Test(arguments: [
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "Content-Length: 0\r\nContent-Length: HIDDEN\r\n\r\n",
        "Content-Length : HIDDEN\r\n\r\n",
    ])
    func smuggledBatchIsNotStored(framing: String) async throws {
        let harness = try await GatewayHarness.start()
        defer { harness.directory.remove() }
        let hidden =
            "POST /v1/logs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nApsio-App-Id: shop\r\n"
            + "Apsio-Batch-Id: hidden-1\r\nContent-Length: \(Self.body.utf8.count)\r\n\r\n\(Self.body)"
        let raw =
            "POST /v1/logs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nApsio-App-Id: shop\r\n"
            + framing.replacingOccurrences(of: "HIDDEN", with: String(hidden.utf8.count)) + hidden
        let port = harness.gateway.httpPort
        let (response, rest) = try await onThread {
            let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 20)
            try connection.send(raw)
            let response = try connection.readResponse()
            return (response, try connection.readUntilClosed())
        }
        #expect(response.status == 400)
        #expect(rest.isEmpty)
        #expect(try Self.outboxRows(in: harness.directory) == 0)
        await harness.stop(removing: false)
    }

    @Test func readDeadlinesComeFromTheConfigFile() throws {
        let file = try ConfigurationFile(
            parsing: Array(
                #"{"httpHeaderTimeoutSeconds": 3, "httpBodyTimeoutSeconds": 7, "httpMinBodyBytesPerSecond": 64}"#.utf8))
        var configuration = GatewayConfiguration(dataDirectory: "/tmp/unused")
        #expect(configuration.httpHeaderTimeout == .seconds(10))
        #expect(configuration.httpBodyTimeout == .seconds(20))
        #expect(configuration.httpMinBodyBytesPerSecond == 500)
        file.apply(to: &configuration)
        #expect(configuration.httpHeaderTimeout == .seconds(3))
        #expect(configuration.httpBodyTimeout == .seconds(7))
        #expect(configuration.httpMinBodyBytesPerSecond == 64)
        configuration.httpMinBodyBytesPerSecond = -1
        #expect(throws: GatewayError.self) { try configuration.validate() }
    }

    @Test func slowHeadersAreCutOffWhileANormalClientIsServed() async throws {
        let harness = try await GatewayHarness.start { $0.httpHeaderTimeout = .seconds(1) }
        defer { harness.directory.remove() }
        let port = harness.gateway.httpPort
        let slow = Task {
            try await onThread { () -> Bool in
                let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 30)
                try connection.send("POST /v1/logs HTTP/1.1\r\nHost: localhost\r\n")
                // One header byte every 200 ms keeps the idle timeout (30 s) from ever firing. Real
                // time on purpose: this is the slow peer, and the server's header deadline on a
                // real socket is what is under test.
                for _ in 0..<100 {
                    guard connection.nothingPending() else { return true }
                    do { try connection.send("X") } catch { return true }
                    usleep(200_000)
                }
                return false
            }
        }
        #expect(try await harness.post(Self.body, batchID: "normal-1").status == 200)
        #expect(try await slow.value)
        await harness.stop(removing: false)
    }
}
