import Foundation
import PulseKit
import Testing

@testable import PulseIngest

@Suite struct StartupTests {
    /// A data directory that cannot be created is a storage error at start.
    @Test func unusableDataDirectoryFailsToStart() async throws {
        let file = NSTemporaryDirectory() + "pulse-ingest-file-" + UUID().uuidString
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        var configuration = IngestConfiguration(dataDirectory: file + "/data")
        configuration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
        await #expect {
            _ = try await IngestServer.start(configuration)
        } throws: { error in
            (error as? IngestError)?.code == .storageFailed
        }
    }

    /// An address in use is a start error, and the store is released again.
    @Test func addressInUseFailsToStart() async throws {
        let harness = try await Harness.start()
        var configuration = IngestConfiguration(dataDirectory: harness.directory + "-second")
        configuration.listen = IngestListenAddress(host: "127.0.0.1", port: harness.server.port)
        await #expect {
            _ = try await IngestServer.start(configuration)
        } throws: { error in
            (error as? IngestError)?.code == .startFailed
        }
        try? FileManager.default.removeItem(atPath: harness.directory + "-second")
        await harness.stop()
    }

    /// The server also listens on IPv6 loopback.
    @Test func listensOnIPv6Loopback() async throws {
        let harness = try await Harness.start { $0.listen = IngestListenAddress(host: "::1", port: 0) }
        #expect(harness.server.localAddress.hasPrefix("[::1]:"))
        await harness.stop()
    }
}
