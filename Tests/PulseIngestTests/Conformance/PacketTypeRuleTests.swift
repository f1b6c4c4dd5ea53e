import Foundation
import MsgTrans
import MsgTransRuntime
import PulseJSON
import PulseProtocol
import Testing

@testable import PulseIngest

/// One test per rule of the contract's "Packet-type rules" section, driven by a raw-socket peer.
@Suite struct PacketTypeRuleTests {
    /// Rule 1: every operation is a Request, and only the matching response confirms it — the
    /// acknowledgement of a batch arrives only once the batch is durably stored.
    @Test func rule1EveryOperationIsARequestAndTheResponseConfirmsIt() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()
        let requests: [(UInt8, String)] = [
            (Biz.heartbeat, #"{"connectionId":"\#(connectionId)","clientTimeMs":1,"sdkVersion":"2.3.0"}"#),
            (Biz.configPull, #"{"configRevision":0,"capabilities":["batch_upload"]}"#),
            (Biz.crashBatch, Fixture.crashBatch(batchId: "cb-1", crashIds: ["crash-1"])),
            (Biz.eventBatch, Fixture.eventBatch(batchId: "eb-1", eventIds: [Fixture.hexID(1)])),
            (
                Biz.updateCheck,
                #"{"platform":"ios","appKey":"app_7f3a","packageName":"com.example.shop","buildNumber":241}"#
            ),
            (Biz.control, #"{"route":"telemetry.ping","args":{},"schemaVersion":1}"#),
        ]
        for (biz, json) in requests {
            let response = try #require(await client.request(biz: biz, json: json))
            #expect(response.echoesRequest)
            #expect(response.frame.bizType == biz)
            #expect(response.code == 0, "biz \(biz): \(response.text)")
            if biz == Biz.eventBatch {
                // The acknowledgement is exactly the contract's bytes, and the batch is already stored.
                #expect(response.text == #"{"code":0,"msg":null,"data":true}"#)
                #expect(try await harness.server.events(app: Fixture.appId).map(\.eventId) == [Fixture.hexID(1)])
            }
            if biz == Biz.crashBatch {
                #expect(response.data as? Bool == true)
                #expect(try await harness.server.crashes(app: Fixture.appId).map(\.crashId) == ["crash-1"])
            }
        }
        await harness.stop()
    }

    /// Rule 2: exactly one Response per complete Request, also on failure, reusing message_id and
    /// biz_type — checked with pipelined failing and succeeding requests.
    @Test func rule2ExactlyOneResponseEchoingIDAndBizTypeEvenOnFailure() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()
        let requests: [(UInt8, String, Int)] = [
            (Biz.eventBatch, "{not json", 400),
            (Biz.heartbeat, #"{"connectionId":"wrong","clientTimeMs":1,"sdkVersion":"2.3.0"}"#, 403),
            (42, "{}", 404),
            (Biz.control, #"{"route":"audit.unknown_route","args":{}}"#, 404),
            (Biz.configPull, #"{"configRevision":99,"capabilities":["batch_upload"]}"#, 409),
            (Biz.heartbeat, #"{"connectionId":"\#(connectionId)","clientTimeMs":1,"sdkVersion":"2.3.0"}"#, 0),
        ]
        var ids: [UInt32: (UInt8, Int)] = [:]
        var pipelined: [UInt8] = []
        for (biz, json, code) in requests {
            let id = client.allocateID()
            ids[id] = (biz, code)
            pipelined += try Frame.make(
                packetType: .request, bizType: biz, messageID: id, plaintext: Array(json.utf8), preferred: .none
            ).encoded()
        }
        await client.write(pipelined)
        for _ in requests {
            let frame = try #require(await client.readFrame())
            let removed = ids.removeValue(forKey: frame.messageID)
            let expected = try #require(removed, "unexpected or repeated id")
            let response = try #require(Response(frame: frame, expectedID: frame.messageID))
            #expect(frame.packetType == .response)
            #expect(frame.bizType == expected.0)
            #expect(response.code == expected.1, "biz \(expected.0): \(response.text)")
        }
        #expect(ids.isEmpty)
        // Nothing else was sent: the next frame answers the next request.
        let probe = try #require(await client.request(biz: Biz.control, json: #"{"route":"telemetry.ping","args":{}}"#))
        #expect(probe.echoesRequest)
        await harness.stop()
    }

    /// Rule 3: the server's own requests (control RPCs) are registered before they are written;
    /// response, timeout and close race to one completion — a late answer after the timeout is a
    /// counted fault, never a second completion.
    @Test func rule3ServerRequestsCompleteOnceByResponseOrTimeout() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()

        async let answered = harness.server.sendControl(app: Fixture.appId, route: .telemetryFlush)
        let request = try #require(await client.readFrame())
        #expect(request.packetType == .request)
        #expect(request.bizType == Biz.control)
        let body = try #require(JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any])
        #expect(body["route"] as? String == "telemetry.flush")
        await client.send(
            .response, biz: Biz.control, json: #"{"code":0,"msg":null,"data":{"flushedBatches":2}}"#,
            messageID: request.messageID)
        let outcomes = await answered
        #expect(outcomes.count == 1)
        #expect(outcomes.first?.connectionId == connectionId)
        #expect(outcomes.first?.code == 0)
        #expect(outcomes.first?.data == .object([JSONMember(key: "flushedBatches", value: .int(2))]))

        // No answer in time: one completion (timeout); the late answer is only counted.
        let unmatchedBefore = harness.server.transportStatistics.unmatchedResponses
        async let timedOut = harness.server.sendControl(
            app: Fixture.appId, route: .telemetryFlush, timeout: .milliseconds(200))
        let second = try #require(await client.readFrame())
        let late = await timedOut
        #expect(late.first?.code == nil)
        #expect(late.first?.failure == "timeout")
        await client.send(
            .response, biz: Biz.control, json: #"{"code":0,"msg":null,"data":null}"#, messageID: second.messageID)
        let probe = try #require(await client.request(biz: Biz.control, json: #"{"route":"telemetry.ping","args":{}}"#))
        #expect(probe.code == 0)
        #expect(harness.server.transportStatistics.unmatchedResponses == unmatchedBefore + 1)
        await harness.stop()
    }

    /// Rule 4: none of the allocated types may travel one-way. A one-way frame carrying one is
    /// answered with a Response carrying its message_id and biz_type and code 400, is not
    /// processed, and the connection stays open.
    @Test func rule4OneWayWithAnAllocatedTypeGets400AndIsNotProcessed() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        for biz in UInt8(1)...7 {
            let json = biz == Biz.eventBatch ? Fixture.eventBatch(batchId: "ow", eventIds: [Fixture.hexID(9)]) : "{}"
            let id = await client.send(.oneWay, biz: biz, json: json, messageID: 500 + UInt32(biz))
            let frame = try #require(await client.readFrame())
            let response = try #require(Response(frame: frame, expectedID: id))
            #expect(frame.packetType == .response)
            #expect(frame.messageID == id)
            #expect(frame.bizType == biz)
            #expect(response.code == 400)
        }
        #expect(try await harness.server.counts(app: Fixture.appId).events == 0)
        let probe = try #require(await client.request(biz: Biz.control, json: #"{"route":"telemetry.ping","args":{}}"#))
        #expect(probe.code == 0)
        await harness.stop()
    }

    /// Rule 5: a Response never enters a business handler; an unmatched or duplicate one is a
    /// counted protocol fault.
    @Test func rule5UnmatchedResponsesNeverReachAHandler() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let before = harness.server.transportStatistics.unmatchedResponses
        let batch = Fixture.eventBatch(batchId: "resp", eventIds: [Fixture.hexID(5)])
        await client.send(.response, biz: Biz.eventBatch, json: batch, messageID: 77)
        await client.send(.response, biz: Biz.eventBatch, json: batch, messageID: 77)
        let probe = try #require(await client.request(biz: Biz.control, json: #"{"route":"telemetry.ping","args":{}}"#))
        #expect(probe.echoesRequest)
        #expect(probe.code == 0)
        #expect(harness.server.transportStatistics.unmatchedResponses == before + 2)
        #expect(try await harness.server.counts(app: Fixture.appId).events == 0)
        await harness.stop()
    }

    /// Rule 6: after CLIENT_CONNECT, an unknown biz_type gets 404 (0 is invalid: 400) and no
    /// allocated type gets 501 from this server, which implements all seven.
    @Test func rule6UnknownTypeIs404AndNoAllocatedTypeIs501() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        for biz: UInt8 in [8, 42, 100, 255] {
            let response = try #require(await client.request(biz: biz, json: "{}"))
            #expect(response.echoesRequest)
            #expect(response.frame.bizType == biz)
            #expect(response.code == 404)
        }
        let reserved = try #require(await client.request(biz: 0, json: "{}"))
        #expect(reserved.code == 400)
        for biz in UInt8(2)...7 {
            let response = try #require(await client.request(biz: biz, json: "{}"))
            #expect(response.code != 501)
            #expect(response.code != 500)
        }
        await harness.stop()
    }

    /// Rule 6, before connect: the first-frame rule takes precedence — an unknown type as the first
    /// frame closes the connection without a response.
    @Test func rule6BeforeConnectTheFirstFrameRuleWins() async throws {
        let (harness, client) = try await Harness.startWithRawClient()
        await client.send(biz: 42, json: "{}")
        #expect(await client.readsEOFWithoutBytes())
        await harness.stop()
    }
}
