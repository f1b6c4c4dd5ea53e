import Foundation
import PulseHashing
import PulseJSON
import PulseKit
import PulseTestSupport
import Synchronization

@testable import PulseUploader

extension ManualClock {
    /// A clock whose wall time starts at `wallClockMilliseconds` (epoch ms).
    convenience init(_ wallClockMilliseconds: Int64) {
        self.init(wallClockMilliseconds: wallClockMilliseconds)
    }

    /// The wall clock, epoch milliseconds.
    var milliseconds: Int64 { wallClockMilliseconds }

    /// Sets the wall clock (a step, forwards or back).
    func set(_ milliseconds: Int64) {
        stepWallClock(by: milliseconds - wallClockMilliseconds)
    }

    /// The uploader's view: this wall clock, without a monotonic reading (tests that need one use
    /// ``uploaderClockWithMonotonic``); the foreground loop sleeps on this clock.
    var uploaderClock: UploaderClock {
        UploaderClock(clock)
    }

    /// The uploader's view with this clock's monotonic timeline on a test timeline.
    var uploaderClockWithMonotonic: UploaderClock {
        UploaderClock(clock, timeline: "test")
    }
}

/// A fresh folder under the temporary directory, removed on `deinit`.
typealias TemporaryDirectory = OwnedScratchDirectory

extension OwnedScratchDirectory {
    convenience init() throws {
        try self.init("uploader-tests")
    }
}

/// Builds uploaders on one data directory with an injected clock and seeded randomness.
struct UploaderFixture {
    let directory: TemporaryDirectory
    let clock: ManualClock
    var endpoint = "http://127.0.0.1:9"
    var policy = UploadPolicy()
    var explicitPolicy: Set<UploadPolicy.Field> = []
    var conditions: (any ConditionsProvider)?
    var backgroundTransfer: (any BackgroundTransfer)?
    var policyRefresh: UploaderConfiguration.PolicyRefreshHook?
    var seed: UInt64 = 7
    var transport: (any UploadTransport)?
    var randomOverride: RandomSource?

    init(clock: ManualClock = ManualClock()) throws {
        directory = try TemporaryDirectory()
        self.clock = clock
    }

    /// A fixture sending to `server`, its policy adjusted by `policy`.
    init(sendingTo server: FaultServer, policy: (inout UploadPolicy) -> Void = { _ in }) throws {
        try self.init()
        endpoint = server.baseURL
        policy(&self.policy)
    }

    func open() async throws -> Uploader {
        var configuration = UploaderConfiguration(endpoint: endpoint, appId: "test-app", dataDirectory: directory.path)
        configuration.clock = clock.uploaderClock
        configuration.random = randomOverride ?? RandomSource(seed: seed)
        configuration.policy = policy
        configuration.explicitPolicy = explicitPolicy
        configuration.conditions = conditions
        configuration.backgroundTransfer = backgroundTransfer
        configuration.policyRefresh = policyRefresh
        configuration.appVersion = "1.2.3"
        configuration.transport =
            transport
            ?? CurlTransport(options: CurlTransport.Options(connections: 2, requestTimeoutMilliseconds: 30_000))
        return try await Uploader(configuration: configuration)
    }
}

/// A hex SHA-256 of bytes, through the module's implementation (tested against FIPS vectors).
func sha256Hex(_ bytes: [UInt8]) -> String {
    SHA256.hexDigest(bytes)
}

/// Decompresses and parses a stored or received batch body.
func parseBody(_ body: [UInt8], encoding: BodyEncoding) throws -> JSONDocument {
    try JSONParser().parse(try BodyCompression.decompress(body, encoding: encoding))
}

/// The value of attribute `key` in an OTLP `attributes` array node, as a plain string rendering.
func attribute(_ attributes: JSONNode?, _ key: String) -> JSONNode? {
    guard let attributes else { return nil }
    for element in attributes.elements where element["key"]?.string == key {
        return element["value"]
    }
    return nil
}

/// A record that encodes to roughly `size` bytes of poorly compressible text.
func paddedEvent(_ name: String = "e", size: Int = 200) -> TelemetryRecord {
    var pad = ""
    var block = Array(name.utf8)
    while pad.utf8.count < max(0, size - 180) {
        let digest = SHA256.hexDigest(block)
        pad += digest
        block = Array(digest.utf8)
    }
    return .event(EventEntry(name: name, attributes: ["pad": .string(String(pad.prefix(max(0, size - 180))))]))
}
