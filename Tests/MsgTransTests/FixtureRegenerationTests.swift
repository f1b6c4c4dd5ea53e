import Foundation
import Testing

/// Rewrites `Tests/MsgTransTests/Fixtures` from ``FixtureGenerator``. Disabled unless
/// `MSGTRANS_REGENERATE_FIXTURES=1` (see `scripts/regenerate-msgtrans-fixtures.sh`): the other
/// tests always compare against the checked-in bytes.
@Test(
    "Regenerate golden fixtures",
    .enabled(if: ProcessInfo.processInfo.environment["MSGTRANS_REGENERATE_FIXTURES"] == "1"))
func regenerateFixtures() throws {
    let output = try FixtureGenerator.generate()
    let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    let fileManager = FileManager.default
    try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
    for stale in try fileManager.contentsOfDirectory(atPath: directory.path) where output.files[stale] == nil {
        try fileManager.removeItem(at: directory.appendingPathComponent(stale))
    }
    for (name, contents) in output.files {
        try Data(contents).write(to: directory.appendingPathComponent(name))
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    var manifest = try encoder.encode(output.manifest)
    manifest.append(0x0A)
    try manifest.write(to: directory.appendingPathComponent("manifest.json"))
    #expect(output.manifest.fixtures.count == output.files.keys.filter { $0.hasSuffix(".hex") }.count)
}
