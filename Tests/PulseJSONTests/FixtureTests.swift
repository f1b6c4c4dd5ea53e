import Foundation
import PulseJSON
import Testing

/// The files in Fixtures/ (also the fuzzer's seed corpus, see scripts/fuzz.sh):
/// `valid-*.json` must parse and survive a JSONWriter round trip unchanged;
/// `invalid-<code>-*.json` must fail with that ``PulseJSONError/Code``.
@Suite struct FixtureTests {
    static let fixtures: [URL] = {
        guard let directory = Bundle.module.url(forResource: "Fixtures", withExtension: nil),
            let files = try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        else { return [] }
        return files.filter { $0.pathExtension == "json" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }()

    static var valid: [URL] { fixtures.filter { $0.lastPathComponent.hasPrefix("valid-") } }
    static var invalid: [URL] { fixtures.filter { $0.lastPathComponent.hasPrefix("invalid-") } }

    @Test func fixturesArePresent() {
        #expect(Self.valid.count >= 9)
        #expect(Self.invalid.count >= 13)
    }

    @Test(arguments: valid)
    func validFixtureRoundTrips(_ url: URL) throws {
        let bytes = try [UInt8](Data(contentsOf: url))
        let value = try JSONValue.parse(bytes)
        let encoded = value.encoded()
        let reparsed = try JSONValue.parse(encoded)
        #expect(identical(reparsed, value))
        #expect(reparsed.encoded() == encoded)
    }

    @Test(arguments: invalid)
    func invalidFixtureFailsWithItsCode(_ url: URL) throws {
        let name = url.deletingPathExtension().lastPathComponent
        let codeName = try #require(name.split(separator: "-").dropFirst().first.map(String.init))
        let expected = try #require(PulseJSONError.Code(rawValue: codeName), "bad fixture name \(name)")
        let bytes = try [UInt8](Data(contentsOf: url))
        #expect(failure(bytes) == expected, "\(name)")
    }

    @Test func otlpSampleReadsAsOTLP() throws {
        let url = try #require(Self.valid.first { $0.lastPathComponent == "valid-otlp-logs-20.json" })
        let root = try JSONParser().parse([UInt8](Data(contentsOf: url))).root
        let records = try #require(root["resourceLogs"]?[0]?["scopeLogs"]?[0]?["logRecords"])
        #expect(records.count == 20)
        for record in records.elements {
            #expect(record["traceId"]?.withUTF8 { $0.count } == 32)
            #expect(record["timeUnixNano"]?.string.flatMap { UInt64($0) } != nil)
            #expect(record["body"]?["stringValue"]?.kind == .string)
        }
    }

    @Test func pulseSampleReadsAsABatch() throws {
        let url = try #require(Self.valid.first { $0.lastPathComponent == "valid-pulse-batch-64.json" })
        let root = try JSONParser().parse([UInt8](Data(contentsOf: url))).root
        #expect(root["identity"]?["projectId"]?.kind == .string)
        #expect(root["batchId"]?.withUTF8 { $0.count } == 32)
        let events = try #require(root["events"])
        #expect(events.count == 64)
        let kinds: Set<String> = [
            "Analytics", "Crash", "Error", "Log", "Network", "Performance", "Runtime", "Breadcrumb",
        ]
        for event in events.elements {
            #expect(kinds.contains(event["kind"]?.string ?? ""))
            #expect(event["timestamp"]?.int64 != nil)
            #expect(event["attributes"]?.kind == .object)
        }
    }
}
