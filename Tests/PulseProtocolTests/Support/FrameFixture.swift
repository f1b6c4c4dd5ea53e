import Foundation
import MsgTrans
import PulseProtocol
import Testing

/// One golden frame as listed in `Fixtures/manifest.json`.
struct FrameFixture: Codable, Sendable, CustomTestStringConvertible {
    /// Unique name; also the stem of the two files.
    var name: String
    /// What the frame shows.
    var description: String
    /// The contract name of the biz type, e.g. `CLIENT_EVENT_BATCH_UPLOAD`.
    var bizType: String
    /// `request`, `response` or `oneWay`.
    var packetType: String
    /// The header's message id.
    var messageID: UInt32
    /// `none`, `zstd` or `zlib`, as in the header.
    var compression: String
    /// The payload model, a key of ``PayloadModels/all``.
    var model: String
    /// The frame as a hex dump.
    var frameFile: String
    /// The plaintext payload (UTF-8 JSON, exact bytes, no trailing newline).
    var plaintextFile: String

    var testDescription: String { name }

    var entry: PulseBizTypeEntry? { PulseBizType.registry.entry(named: bizType) }

    var msgTransPacketType: PacketType? {
        switch packetType {
        case "request": return .request
        case "response": return .response
        case "oneWay": return .oneWay
        default: return nil
        }
    }

    var msgTransCompression: Compression? {
        switch compression {
        case "none": return Compression.none
        case "zstd": return .zstd
        case "zlib": return .zlib
        default: return nil
        }
    }
}

struct FixtureManifest: Codable {
    var fixtures: [FrameFixture]
}

/// Reads the checked-in fixtures from the test bundle.
enum FixtureStore {
    static let directory: URL = {
        guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            fatalError("Fixtures folder missing from the test bundle")
        }
        return url
    }()

    static let all: [FrameFixture] = {
        do {
            let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
            return try JSONDecoder().decode(FixtureManifest.self, from: data).fixtures
        } catch {
            fatalError("cannot read Fixtures/manifest.json: \(error)")
        }
    }()

    static func frameBytes(_ fixture: FrameFixture) throws -> [UInt8] {
        try Hex.parse(try String(contentsOf: directory.appendingPathComponent(fixture.frameFile), encoding: .utf8))
    }

    static func plaintext(_ fixture: FrameFixture) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(fixture.plaintextFile)))
    }
}
