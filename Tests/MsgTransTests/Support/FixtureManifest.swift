import Foundation
import MsgTrans
import PulseKit
import Testing

/// `Fixtures/manifest.json`: one entry per golden frame file.
struct FixtureManifest: Codable {
    /// Describes the file format for humans reading the manifest.
    var format: String
    var fixtures: [FixtureCase]
}

/// What decoding a fixture file must produce.
enum FixtureExpectation: String, Codable, Sendable {
    /// The file is exactly one complete frame.
    case frame
    /// The file is an incomplete frame: the decoder returns nil and consumes nothing.
    case partial
    /// The decoder rejects the header (the error must also occur with only the 16 header bytes).
    case decodeError
}

struct FixtureLimits: Codable, Sendable {
    var maxPayloadBytes: Int?
    var maxExtensionHeaderBytes: Int?
    var maxDecompressedBytes: Int?

    var frameLimits: FrameLimits {
        let defaults = FrameLimits()
        return FrameLimits(
            maxPayloadBytes: maxPayloadBytes ?? defaults.maxPayloadBytes,
            maxExtensionHeaderBytes: maxExtensionHeaderBytes ?? defaults.maxExtensionHeaderBytes,
            maxDecompressedBytes: maxDecompressedBytes ?? defaults.maxDecompressedBytes)
    }
}

struct FixtureFrameFields: Codable, Sendable {
    var compression: String
    var packetType: String
    var bizType: UInt8
    var messageID: UInt32
    var flags: UInt16
    var extensionHeaderLength: Int
    var payloadLength: Int
}

struct FixtureCase: Codable, Sendable, CustomTestStringConvertible {
    var name: String
    /// The hex file, relative to the Fixtures folder.
    var file: String
    var description: String
    /// Limits to decode with; omitted fields use the defaults.
    var limits: FixtureLimits?
    var expect: FixtureExpectation
    /// `MsgTransError.Code` case name, for `decodeError`.
    var decodeError: String?
    /// The exact 16 header bytes in hex, for the worked examples of wire-reference.md.
    var header: String?
    /// Header fields of the decoded frame, for `frame`.
    var frame: FixtureFrameFields?
    /// Raw file with the expected plaintext, for frames whose payload decompresses.
    var plaintextFile: String?
    /// `MsgTransError.Code` case name thrown by `plaintext(limits:)`.
    var plaintextError: String?
    /// For decompression bombs: the plaintext length when decoded with a large enough limit.
    var unboundedPlaintextLength: Int?

    var testDescription: String { name }

    var frameLimits: FrameLimits { limits?.frameLimits ?? FrameLimits() }
}

/// Loads the checked-in fixtures from the test bundle. Never regenerates them.
enum Fixtures {
    static let directory: URL = {
        guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            fatalError("Fixtures folder missing from the test bundle")
        }
        return url
    }()

    static let manifest: FixtureManifest = {
        do {
            let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
            return try JSONDecoder().decode(FixtureManifest.self, from: data)
        } catch {
            fatalError("cannot load Fixtures/manifest.json: \(error)")
        }
    }()

    static var all: [FixtureCase] { manifest.fixtures }

    static func named(_ name: String) throws -> FixtureCase {
        try #require(all.first { $0.name == name }, "no fixture named \(name)")
    }

    static func bytes(of fixture: FixtureCase) throws -> [UInt8] {
        let text = try String(contentsOf: directory.appendingPathComponent(fixture.file), encoding: .utf8)
        return try Hex.decode(text)
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        try bytes(of: named(name))
    }

    static func plaintext(of fixture: FixtureCase) throws -> [UInt8]? {
        guard let file = fixture.plaintextFile else { return nil }
        return [UInt8](try Data(contentsOf: directory.appendingPathComponent(file)))
    }

    static func code(named name: String) throws -> MsgTransError.Code {
        try #require(MsgTransError.Code.allCases.first { "\($0)" == name }, "unknown error code \(name)")
    }
}
