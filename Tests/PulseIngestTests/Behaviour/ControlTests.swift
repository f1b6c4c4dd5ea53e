import Foundation
import MsgTrans
import PulseJSON
import PulseProtocol
import Testing

@testable import PulseIngest

@Suite struct ControlTests {
    /// The server's allowlisted routes answer; an unknown well-formed route is 404 without closing;
    /// a malformed route is 400.
    @Test func inboundRoutesAreAllowlisted() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let ping = try #require(
            await client.request(biz: Biz.control, json: #"{"route":"telemetry.ping","args":{},"schemaVersion":1}"#))
        #expect(ping.code == 0)
        #expect((ping.dataObject["serverTimeMs"] as? NSNumber)?.int64Value == harness.clock.milliseconds)
        let revision = try #require(await client.request(biz: Biz.control, json: #"{"route":"config.revision"}"#))
        #expect((revision.dataObject["configRevision"] as? NSNumber)?.intValue == 7)
        for route in ["telemetry.flush", "audit.export_everything", "system.exec"] {
            let response = try #require(
                await client.request(biz: Biz.control, json: #"{"route":"\#(route)","args":{}}"#))
            #expect(response.code == 404, "\(route)")
        }
        for json in [#"{"route":"Telemetry.Flush"}"#, #"{"route":"flush"}"#, #"{"args":{}}"#, "[]"] {
            let response = try #require(await client.request(biz: Biz.control, json: json))
            #expect(response.code == 400, "\(json)")
        }
        let still = try #require(await client.request(biz: Biz.control, json: #"{"route":"telemetry.ping"}"#))
        #expect(still.code == 0)
        await harness.stop()
    }

    /// A control RPC goes to every connected client of the app, and only those.
    @Test func outboundControlReachesEveryClientOfTheApp() async throws {
        let (harness, first, firstId) = try await Harness.startConnected()
        let (second, secondId) = try await harness.connectedClient(Fixture.connect(device: "dev-2"))
        let (other, _) = try await harness.connectedClient(Fixture.connect(appId: "app_other"))
        let route = try #require(ControlRoute("config.invalidate"))
        async let outcomes = harness.server.sendControl(app: Fixture.appId, route: route, arguments: .object([]))
        for client in [first, second] {
            let request = try #require(await client.readFrame())
            let body = try #require(JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any])
            #expect(body["route"] as? String == "config.invalidate")
            #expect((body["schemaVersion"] as? NSNumber)?.intValue == 1)
            await client.send(
                .response, biz: 7, json: #"{"code":0,"msg":null,"data":true}"#, messageID: request.messageID)
        }
        let results = await outcomes
        #expect(Set(results.map(\.connectionId)) == [firstId, secondId])
        #expect(results.allSatisfy { $0.code == 0 && $0.data == .bool(true) })
        let ping = try #require(await other.request(biz: Biz.control, json: #"{"route":"telemetry.ping"}"#))
        #expect(ping.echoesRequest)
        await harness.stop()
    }
}
