import PulseJSON
import PulseProtocol
import PulseTestSupport
import Testing

@testable import PulseGateway

/// `GET /v1/policy`, `Apsio-Policy-Revision` and the policy cache, against a scripted upstream.
@Suite struct PolicyTests {
    static let snapshot =
        #"{"revision":3,"killSwitch":false,"sampling":{"Network":0.25},"diagnosticsLevel":"callDetails","requiredCapabilities":["batch_upload"]}"#

    static func harness(_ upstream: ScriptedUpstream, directory: TemporaryDirectory? = nil) async throws
        -> GatewayHarness
    {
        let connector = PulseClientUpstreamConnector(
            host: "127.0.0.1", port: upstream.port, requestTimeout: .seconds(5), connectTimeout: .seconds(5))
        // A configured app: the gateway may ask the upstream for it before any traffic.
        return try await GatewayHarness.start(
            directory: directory, policy: GatewayPolicy(allowedAppIDs: ["shop"]), connector: connector)
    }

    static func get(_ harness: GatewayHarness, app: String = "shop", ifNoneMatch: String? = nil) async throws
        -> RawHTTPResponse
    {
        var headers = [("Apsio-App-Id", app)]
        if let ifNoneMatch { headers.append(("If-None-Match", ifNoneMatch)) }
        return try await harness.request("GET", "/v1/policy", headers: headers)
    }

    @Test func servesTheSnapshotWithETagAndAnswers304ForTheSameRevision() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.configure(snapshot: Self.snapshot)
        let harness = try await Self.harness(upstream)
        let response = try await Self.get(harness)
        #expect(response.status == 200)
        #expect(response.header("ETag") == "\"3\"")
        #expect(response.header("Apsio-Policy-Revision") == "3")
        #expect(response.header("Cache-Control") == "no-cache")
        #expect(response.header("Content-Type") == "application/json")
        let expected = try ConfigSnapshot(decodingJSON: Array(Self.snapshot.utf8)).encodeJSON()
        #expect(response.body == expected)
        #expect(
            response.bodyText.hasPrefix(
                #"{"revision":3,"killSwitch":false,"maxBatchAgeMs":604800000,"queueByteCap":8388608,"#))
        // The gateway's own session asked (no device connection existed): CONNECT, then CONFIG_PULL.
        #expect(upstream.received.map(\.bizType) == [1, 3])
        let connect = try JSONValue.parse(upstream.received[0].payload)
        #expect(connect["deviceId"] == .string("pulsegate-gateway"))

        for condition in ["\"3\"", "*", "\"2\", W/\"3\""] {
            let cached = try await Self.get(harness, ifNoneMatch: condition)
            #expect(cached.status == 304)
            #expect(cached.body.isEmpty)
            #expect(cached.header("ETag") == "\"3\"")
            #expect(cached.header("Apsio-Policy-Revision") == "3")
        }
        #expect(try await Self.get(harness, ifNoneMatch: "\"2\"").status == 200)
        await harness.stop()
        await upstream.stop()
    }

    @Test func noPolicyUpstreamIs404AndNoUpstreamIs503() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.configure(configPullCode: 404)
        let harness = try await Self.harness(upstream)
        let missing = try await Self.get(harness)
        #expect(missing.status == 404)
        #expect(missing.bodyText == #"{"code":5,"message":"no policy for app shop"}"#)
        await harness.stop()
        await upstream.stop()

        let isolated = try await GatewayHarness.start()
        let unavailable = try await Self.get(isolated)
        #expect(unavailable.status == 503)
        #expect(unavailable.header("Retry-After") == "5")
        let body = try JSONValue.parse(unavailable.body)
        #expect(body["code"] == JSONValue.int(14))
        await isolated.stop()
    }

    @Test func refusedConnectIs404() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.configure(connectCode: 403)
        let harness = try await Self.harness(upstream)
        #expect(try await Self.get(harness).status == 404)
        await harness.stop()
        await upstream.stop()
    }

    @Test func requestsAreValidatedLikeIntake() async throws {
        let harness = try await GatewayHarness.start(policy: GatewayPolicy(allowedAppIDs: ["shop"]))
        let post = try await harness.request("POST", "/v1/policy", headers: [("Apsio-App-Id", "shop")])
        #expect(post.status == 405)
        #expect(post.header("Allow") == "GET")
        #expect(try await harness.request("GET", "/v1/policy", headers: []).status == 400)
        #expect(try await Self.get(harness, app: "bad app").status == 400)
        let forbidden = try await Self.get(harness, app: "news")
        #expect(forbidden.status == 403)
        #expect(try JSONValue.parse(forbidden.body)["code"] == JSONValue.int(7))
        await harness.stop()
    }

    @Test func uploadResponsesCarryTheCachedRevisionAndTheCacheSurvivesARestart() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.configure(connectRevision: 3, snapshot: Self.snapshot)
        let directory = try TemporaryDirectory()
        let harness = try await Self.harness(upstream, directory: directory)
        let first = try await harness.post(ForwarderTests.body, batchID: "p-1")
        #expect(first.status == 200)
        #expect(first.header("Apsio-Policy-Revision") == "0")
        // The forwarder's CONNECT reports revision 3 > 0 cached: the gateway pulls on its own.
        #expect(await eventually { harness.gateway.policyRevision(app: "shop") == 3 })
        #expect(upstream.received.map(\.bizType).contains(3))
        let second = try await harness.post(ForwarderTests.body, batchID: "p-2")
        #expect(second.header("Apsio-Policy-Revision") == "3")
        let refused = try await harness.post(ForwarderTests.body, batchID: "bad id!")
        #expect(refused.status == 400)
        #expect(refused.header("Apsio-Policy-Revision") == "3")
        await harness.stop(removing: false)
        await upstream.stop()

        // No upstream now: the persisted snapshot is served.
        let restarted = try await GatewayHarness.start(directory: directory)
        let cached = try await Self.get(restarted)
        #expect(cached.status == 200)
        #expect(cached.header("ETag") == "\"3\"")
        #expect(try await restarted.post(ForwarderTests.body, batchID: "p-3").header("Apsio-Policy-Revision") == "3")
        await restarted.stop()
    }

    @Test func aConflictPullsIntoTheCacheBeforeTheRetry() async throws {
        let upstream = try await ScriptedUpstream.start(uploadCodes: [409])
        upstream.configure(snapshot: Self.snapshot)
        let harness = try await Self.harness(upstream)
        #expect(try await harness.post(ForwarderTests.body).status == 200)
        #expect(await eventually { harness.gateway.outboxBatches == 0 })
        #expect(upstream.received.map(\.bizType) == [1, 5, 3, 5])
        #expect(harness.gateway.policyRevision(app: "shop") == 3)
        await harness.stop()
        await upstream.stop()
    }
}
