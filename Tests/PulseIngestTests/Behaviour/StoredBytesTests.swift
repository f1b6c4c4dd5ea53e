import Foundation
import MsgTrans
import PulseProtocol
import Testing

@testable import PulseIngest

/// Events and crash reports are stored as the client sent them (slices of the decoded payload),
/// not re-encoded; the admin listings still show the canonical encoding, as before.
@Suite struct StoredBytesTests {
    /// Not canonical: spaces, another member order, an unknown member, an escape, `1.50`.
    static let looseEvents = [
        #"{ "kind":"Analytics", "id":"\#(Fixture.hexID(1))","timestamp":1764399990001,"sessionId":"sess-1","name":"checkout","source":{"module":"ShopKit","imageUuid":null},"attributes":{"price":1.50,"label":"caf\u00e9","n":[1, 2]},"extra":{"x":[true]} }"#,
        #"{"id":"\#(Fixture.hexID(2))","timestamp":1764399990002,"sessionId":"sess-1","kind":"Network","name":"GET /cart","source":{"module":"ShopKit","imageUuid":null},"attributes":{}}"#,
    ]

    @Test(arguments: [Compression.zstd, .none])
    func eventBytesAreStoredAsSent(compression: Compression) async throws {
        let harness = try await Harness.start(admin: true)
        let (client, _) = try await harness.connectedClient()
        let json = """
            {"identity":\(Fixture.identity()),
              "events": [\n\(Self.looseEvents[0]) ,\t\(Self.looseEvents[1])
            ], "batchId":"loose"}
            """
        let response = try #require(await client.request(biz: Biz.eventBatch, json: json, compression: compression))
        #expect(response.text == #"{"code":0,"msg":null,"data":true}"#)
        let stored = try await harness.server.events(app: Fixture.appId, limit: 10)
        #expect(stored.count == 2)
        for (index, sent) in Self.looseEvents.enumerated() {
            let event = try #require(stored.first { $0.eventId == Fixture.hexID(index + 1) })
            #expect(Array(event.json.utf8) == Array(sent.utf8))
        }
        // The listing shows each event canonically encoded, exactly as when the store kept that.
        let port = try #require(harness.server.adminPort)
        let listing = try #require(await HTTPProbe.send(port: port, path: "/events?app=\(Fixture.appId)"))
        let body = String(decoding: listing.body, as: UTF8.self)
        for sent in Self.looseEvents {
            let canonical = String(decoding: try PulseEvent(decodingJSON: Array(sent.utf8)).encodeJSON(), as: UTF8.self)
            #expect(body.contains(#""event":\#(canonical)}"#), "\(body)")
        }
        await harness.stop()
    }

    @Test func crashBytesAreStoredAsSent() async throws {
        let harness = try await Harness.start(admin: true)
        let (client, _) = try await harness.connectedClient()
        let loose = Fixture.crash(id: "crash-a").replacingOccurrences(of: #","signal""#, with: #" , "signal""#)
        let json = #"{"identity":\#(Fixture.identity()),"crashes":[ \#(loose) ],"batchId":"cb"}"#
        let response = try #require(await client.request(biz: Biz.crashBatch, json: json, compression: .zstd))
        #expect(response.code == 0)
        let crash = try #require(try await harness.server.crashes(app: Fixture.appId).first)
        #expect(crash.json == loose)
        let port = try #require(harness.server.adminPort)
        let listing = try #require(await HTTPProbe.send(port: port, path: "/crashes?app=\(Fixture.appId)"))
        let canonical = String(decoding: try CrashReport(decodingJSON: Array(loose.utf8)).encodeJSON(), as: UTF8.self)
        #expect(String(decoding: listing.body, as: UTF8.self).contains(#""crash":\#(canonical)}"#))
        await harness.stop()
    }

    /// When the received bytes of the events cannot be found byte for byte (the member name is
    /// written with an escape), the canonical encoding is stored instead: the same event.
    @Test func escapedMemberNameFallsBackToTheCanonicalEncoding() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let event = Self.looseEvents[0]
        let json = #"{"identity":\#(Fixture.identity()),"\u0065vents":[\#(event)],"batchId":"esc"}"#
        let response = try #require(await client.request(biz: Biz.eventBatch, json: json))
        #expect(response.code == 0)
        let stored = try #require(try await harness.server.events(app: Fixture.appId).first)
        #expect(Array(stored.json.utf8) == (try PulseEvent(decodingJSON: Array(event.utf8))).encodeJSON())
        await harness.stop()
    }
}
