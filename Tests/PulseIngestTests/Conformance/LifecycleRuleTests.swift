import Foundation
import MsgTrans
import MsgTransRuntime
import PulseProtocol
import Testing

@testable import PulseIngest

/// One test per rule of the contract's "Direction and connection lifecycle" section, driven by a
/// raw-socket peer.
@Suite struct LifecycleRuleTests {
    // MARK: First frame

    /// The first frame must be a Request with biz_type 1: a batch request first closes the
    /// connection with no response and nothing dispatched.
    @Test func firstFrameRequestOfAnotherTypeClosesWithoutResponseOrDispatch() async throws {
        let (harness, client) = try await Harness.startWithRawClient()
        await client.send(biz: Biz.eventBatch, json: Fixture.eventBatch(batchId: "first", eventIds: [Fixture.hexID(1)]))
        #expect(await client.readsEOFWithoutBytes())
        #expect(try await harness.server.counts(app: Fixture.appId) == IngestCounts())
        #expect(harness.server.transportStatistics.admissionCloses == 1)
        await harness.stop()
    }

    /// A one-way CLIENT_CONNECT as the first frame is not a Request: closed, no session.
    @Test func firstFrameOneWayConnectCloses() async throws {
        let (harness, client) = try await Harness.startWithRawClient()
        await client.send(.oneWay, biz: Biz.connect, json: Fixture.connect())
        #expect(await client.readsEOFWithoutBytes())
        #expect(try await harness.server.connectionHistory(app: Fixture.appId).isEmpty)
        await harness.stop()
    }

    /// A Response as the first frame is a protocol violation too: closed.
    @Test func firstFrameResponseCloses() async throws {
        let (harness, client) = try await Harness.startWithRawClient()
        await client.send(.response, biz: Biz.connect, json: #"{"code":0,"msg":null,"data":true}"#, messageID: 1)
        #expect(await client.readsEOFWithoutBytes())
        await harness.stop()
    }

    /// The bytes of everything behind a violating first frame are not dispatched either.
    @Test func framesBehindAViolatingFirstFrameAreNotDispatched() async throws {
        let (harness, client) = try await Harness.startWithRawClient()
        var bytes = try Frame.make(
            packetType: .request, bizType: Biz.heartbeat, messageID: 1, plaintext: Array("{}".utf8), preferred: .none
        ).encoded()
        bytes += try Frame.make(
            packetType: .request, bizType: Biz.connect, messageID: 2, plaintext: Array(Fixture.connect().utf8),
            preferred: .none
        ).encoded()
        await client.write(bytes)
        #expect(await client.readsEOFWithoutBytes())
        #expect(try await harness.server.connectionHistory(app: Fixture.appId).isEmpty)
        await harness.stop()
    }

    // MARK: CONNECT binds the identity

    /// A successful connect binds the connection and returns the connect result.
    @Test func connectBindsTheConnectionAndReportsRevisionAndInterval() async throws {
        let (harness, client) = try await Harness.startWithRawClient()
        let response = try #require(await client.request(biz: Biz.connect, json: Fixture.connect()))
        #expect(response.echoesRequest)
        #expect(response.frame.bizType == Biz.connect)
        #expect(response.code == 0)
        let data = response.dataObject
        #expect(data["connected"] as? Bool == true)
        #expect((data["protocolVersion"] as? NSNumber)?.intValue == 2)
        let connectionId = try #require(data["connectionId"] as? String)
        #expect(connectionId.count == 32)
        #expect((data["serverTimeMs"] as? NSNumber)?.int64Value == harness.clock.milliseconds)
        #expect((data["configRevision"] as? NSNumber)?.intValue == 7)
        #expect((data["heartbeatIntervalMs"] as? NSNumber)?.intValue == 60_000)
        let history = try await harness.server.connectionHistory(app: Fixture.appId)
        #expect(history.map(\.connectionId) == [connectionId])
        #expect(history.first?.packageName == Fixture.package)
        #expect(history.first?.closedAtMs == nil)
        await harness.stop()
    }

    /// A malformed or rejected connect gets its error envelope, nothing else is accepted (401)
    /// until a connect succeeds, and a later connect on the same connection may succeed.
    @Test func rejectedConnectAnswersAndOnlyAnotherConnectIsAccepted() async throws {
        let (harness, client) = try await Harness.startWithRawClient()
        let malformed = try #require(await client.request(biz: Biz.connect, json: #"{"appId":"app_7f3a"}"#))
        #expect(malformed.code == 400)
        let unknownApp = try #require(await client.request(biz: Biz.connect, json: Fixture.connect(appId: "nope")))
        #expect(unknownApp.code == 403)
        let badPackage = try #require(
            await client.request(biz: Biz.connect, json: Fixture.connect(package: "com.evil")))
        #expect(badPackage.code == 403)
        let noPackage = try #require(await client.request(biz: Biz.connect, json: Fixture.connect(package: nil)))
        #expect(noPackage.code == 403)
        let oldProtocol = try #require(
            await client.request(biz: Biz.connect, json: Fixture.connect(protocolVersion: 1)))
        #expect(oldProtocol.code == 400)
        for biz in UInt8(2)...7 {
            let json = biz == Biz.eventBatch ? Fixture.eventBatch(batchId: "pre", eventIds: [Fixture.hexID(3)]) : "{}"
            let response = try #require(await client.request(biz: biz, json: json))
            #expect(response.echoesRequest)
            #expect(response.code == 401, "biz \(biz) before connect: \(response.text)")
        }
        #expect(try await harness.server.counts(app: Fixture.appId).events == 0)
        let connected = try #require(await client.request(biz: Biz.connect, json: Fixture.connect()))
        #expect(connected.code == 0)
        let batch = try #require(
            await client.request(
                biz: Biz.eventBatch, json: Fixture.eventBatch(batchId: "b", eventIds: [Fixture.hexID(3)])))
        #expect(batch.code == 0)
        await harness.stop()
    }

    /// Frames written right behind CLIENT_CONNECT (in the same TCP write) are judged by the
    /// connect's outcome: accepted after a successful connect, 401 after a rejected one.
    @Test func framesPipelinedBehindConnectSeeItsOutcome() async throws {
        let harness = try await Harness.start()
        for (connect, expected) in [(Fixture.connect(), 0), (Fixture.connect(appId: "nope"), 401)] {
            let client = await RawClient.connect(port: harness.server.port)
            var bytes: [UInt8] = []
            for (id, biz, json) in [
                (UInt32(1), Biz.connect, connect),
                (
                    2, Biz.eventBatch,
                    Fixture.eventBatch(batchId: "pipe-\(expected)", eventIds: [Fixture.hexID(expected + 10)])
                ),
                (3, Biz.control, #"{"route":"telemetry.ping","args":{}}"#),
            ] {
                bytes += try Frame.make(
                    packetType: .request, bizType: biz, messageID: id, plaintext: Array(json.utf8), preferred: .none
                ).encoded()
            }
            await client.write(bytes)
            var codes: [UInt32: Int] = [:]
            for _ in 0..<3 {
                let frame = try #require(await client.readFrame())
                codes[frame.messageID] = try #require(Response(frame: frame, expectedID: frame.messageID)).code
            }
            #expect(codes[2] == expected)
            #expect(codes[3] == expected)
        }
        #expect(try await harness.server.counts(app: Fixture.appId).events == 1)
        await harness.stop()
    }

    /// The identity is immutable: a second connect is refused (409) and the first stays bound.
    @Test func secondConnectIsRefusedAndTheIdentityStays() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()
        let again = try #require(await client.request(biz: Biz.connect, json: Fixture.connect(device: "dev-2")))
        #expect(again.code == 409)
        let heartbeat = try #require(
            await client.request(
                biz: Biz.heartbeat, json: #"{"connectionId":"\#(connectionId)","clientTimeMs":1,"sdkVersion":"2.3.0"}"#)
        )
        #expect(heartbeat.code == 0)
        let otherDevice = try #require(
            await client.request(
                biz: Biz.eventBatch,
                json: Fixture.eventBatch(
                    batchId: "x", eventIds: [Fixture.hexID(1)], identity: Fixture.identity(device: "dev-2"))))
        #expect(otherDevice.code == 403)
        await harness.stop()
    }

    /// A batch whose app, package, device, installation, platform or SDK version differs from the
    /// connected identity is rejected with 403 and stores nothing.
    @Test(arguments: [
        Fixture.identity(appId: "app_other"), Fixture.identity(package: "com.example.shop.beta"),
        Fixture.identity(package: nil), Fixture.identity(device: "dev-9"), Fixture.identity(installation: "inst-9"),
        Fixture.identity(platform: "android"), Fixture.identity(sdk: "2.3.1"),
    ])
    func batchWithADifferentIdentityIs403(identity: String) async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let events = try #require(
            await client.request(
                biz: Biz.eventBatch,
                json: Fixture.eventBatch(batchId: "e", eventIds: [Fixture.hexID(1)], identity: identity)))
        #expect(events.code == 403)
        let crashes = try #require(
            await client.request(
                biz: Biz.crashBatch, json: Fixture.crashBatch(batchId: "c", crashIds: ["crash-1"], identity: identity)))
        #expect(crashes.code == 403)
        #expect(try await harness.server.counts(app: Fixture.appId).events == 0)
        #expect(try await harness.server.counts(app: "app_other") == IngestCounts())
        // Fields outside the binding (user, app version, build) may differ.
        let matching = Fixture.identity().replacingOccurrences(of: #""userId":null"#, with: #""userId":"u-1""#)
        let accepted = try #require(
            await client.request(
                biz: Biz.eventBatch,
                json: Fixture.eventBatch(batchId: "ok", eventIds: [Fixture.hexID(2)], identity: matching)))
        #expect(accepted.code == 0)
        await harness.stop()
    }

    /// A heartbeat with the wrong connection ID or SDK version is rejected with 403.
    @Test func heartbeatWithWrongConnectionIDOrSDKVersionIs403() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()
        let (_, otherId) = try await harness.connectedClient(Fixture.connect(device: "dev-2"))
        for json in [
            #"{"connectionId":"\#(otherId)","clientTimeMs":1,"sdkVersion":"2.3.0"}"#,
            #"{"connectionId":"\#(connectionId)","clientTimeMs":1,"sdkVersion":"9.9.9"}"#,
        ] {
            let response = try #require(await client.request(biz: Biz.heartbeat, json: json))
            #expect(response.code == 403)
        }
        let history = try await harness.server.connectionHistory(app: Fixture.appId)
        #expect(history.allSatisfy { $0.heartbeatCount == 0 })
        await harness.stop()
    }

    // MARK: Sequence steps

    /// Step 3: the connect reports a revision; CLIENT_CONFIG_PULL returns that snapshot.
    @Test func configPullReconcilesTheRevisionReportedAtConnect() async throws {
        let (harness, client) = try await Harness.startWithRawClient()
        let connect = try #require(await client.request(biz: Biz.connect, json: Fixture.connect()))
        let revision = try #require((connect.dataObject["configRevision"] as? NSNumber)?.intValue)
        let pull = try #require(
            await client.request(biz: Biz.configPull, json: #"{"configRevision":0,"capabilities":["batch_upload"]}"#))
        #expect(pull.code == 0)
        #expect((pull.dataObject["revision"] as? NSNumber)?.intValue == revision)
        await harness.stop()
    }

    /// Step 4: batches may be in flight concurrently; each gets its own acknowledgement.
    @Test func concurrentBatchesOnOneConnectionAreEachAcknowledged() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        var bytes: [UInt8] = []
        var ids: Set<UInt32> = []
        for index in 0..<8 {
            let id = client.allocateID()
            ids.insert(id)
            let json = Fixture.eventBatch(batchId: "c\(index)", eventIds: [Fixture.hexID(100 + index)])
            bytes += try Frame.make(
                packetType: .request, bizType: Biz.eventBatch, messageID: id, plaintext: Array(json.utf8),
                preferred: .zstd, policy: .init(compressionMinBytes: 0)
            ).encoded()
        }
        await client.write(bytes)
        for _ in 0..<8 {
            let frame = try #require(await client.readFrame())
            #expect(ids.remove(frame.messageID) != nil)
            #expect(try #require(Response(frame: frame, expectedID: frame.messageID)).code == 0)
        }
        #expect(try await harness.server.counts(app: Fixture.appId).events == 8)
        await harness.stop()
    }

    /// Step 5: heartbeats keep the session present and report the revision and next interval.
    @Test func heartbeatReportsRevisionAndInterval() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()
        let response = try #require(
            await client.request(
                biz: Biz.heartbeat, json: #"{"connectionId":"\#(connectionId)","clientTimeMs":5,"sdkVersion":"2.3.0"}"#)
        )
        #expect(response.code == 0)
        #expect(response.dataObject["accepted"] as? Bool == true)
        #expect((response.dataObject["configRevision"] as? NSNumber)?.intValue == 7)
        #expect((response.dataObject["heartbeatIntervalMs"] as? NSNumber)?.intValue == 60_000)
        #expect(harness.server.isPresent(connectionId: connectionId))
        await harness.stop()
    }

    /// Step 6: either peer may issue a control RPC, concurrently with the other's requests: the
    /// server's request to the client is pending while the client's own requests are answered.
    @Test func controlRPCsFlowBothWaysWithoutBlockingEachOther() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        async let outcomes = harness.server.sendControl(app: Fixture.appId, route: .telemetryFlush)
        let serverRequest = try #require(await client.readFrame())
        #expect(serverRequest.packetType == .request)
        // While the server waits for the client, the client's requests are still served.
        let ping = try #require(await client.request(biz: Biz.control, json: #"{"route":"telemetry.ping","args":{}}"#))
        #expect(ping.code == 0)
        let batch = try #require(
            await client.request(
                biz: Biz.eventBatch, json: Fixture.eventBatch(batchId: "bi", eventIds: [Fixture.hexID(4)])))
        #expect(batch.code == 0)
        await client.send(
            .response, biz: Biz.control, json: #"{"code":404,"msg":"unsupported route","data":null}"#,
            messageID: serverRequest.messageID)
        #expect(await outcomes.first?.code == 404)
        await harness.stop()
    }

    /// A response with biz_type 0 (as msgtrans-rust sends) still completes the server's request.
    @Test func responseWithBizTypeZeroCompletesTheServersRequest() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        async let outcomes = harness.server.sendControl(app: Fixture.appId, route: .telemetryFlush)
        let serverRequest = try #require(await client.readFrame())
        await client.send(
            .response, biz: 0, json: #"{"code":0,"msg":null,"data":true}"#, messageID: serverRequest.messageID)
        #expect(await outcomes.first?.code == 0)
        #expect(harness.server.transportStatistics.bizTypeMismatches == 1)
        await harness.stop()
    }
}
