import Foundation
import Testing

/// Rewrites `Tests/PulseProtocolTests/Fixtures` from ``FixtureCatalog``. Disabled unless
/// `PULSE_REGENERATE_FIXTURES=1`; every other test compares against the checked-in files.
@Suite struct FixtureGeneration {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["PULSE_REGENERATE_FIXTURES"] == "1"))
    func regenerate() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures")
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        for stale in try fileManager.contentsOfDirectory(atPath: directory.path) {
            try fileManager.removeItem(at: directory.appendingPathComponent(stale))
        }
        var fixtures: [FrameFixture] = []
        for item in FixtureCatalog.items {
            let frame = try FixtureCatalog.frame(item)
            let fixture = item.fixture
            let comment =
                "\(fixture.name): \(fixture.description) (\(fixture.bizType), \(fixture.packetType), "
                + "id \(fixture.messageID), \(fixture.compression), \(item.plaintext.count) plaintext bytes)"
            try Data(Hex.format(frame: frame, comment: comment).utf8).write(
                to: directory.appendingPathComponent(fixture.frameFile))
            try Data(item.plaintext).write(to: directory.appendingPathComponent(fixture.plaintextFile))
            fixtures.append(fixture)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var manifest = try encoder.encode(FixtureManifest(fixtures: fixtures))
        manifest.append(0x0A)
        try manifest.write(to: directory.appendingPathComponent("manifest.json"))
        #expect(fixtures.count == FixtureCatalog.items.count)
    }
}
