import PulseJSON
import PulseKit
import PulseTestSupport
import Testing

@testable import PulseGateway

/// The forwarder and the policy cache keep the upstream contract: 501 is final, a second 401
/// registers again, connect attempts are capped, `maxConnections` bounds sockets, policy lookups
/// for unknown apps open nothing, and a wall-clock step does not park due rows. Real gateway, real
/// msgtrans upstream on loopback.
@Suite struct UpstreamContractTests {
    static let body = ForwarderTests.body

    /// One log record per device for `count` devices, in one request.
    static func devices(_ count: Int, from first: Int = 0) -> String {
        let resources = (first..<(first + count)).map { index in
            let attributes =
                [OTLP.string("device.id", "dev-\(index)"), OTLP.string("app.installation.id", "inst-\(index)")]
                + OTLP.iosResource.dropFirst(2)
            let record = OTLP.record(1_700_000_000, attributes: [OTLP.string("log.record.uid", "u-\(index)")])
            return #"{"resource":{"attributes":[\#(attributes.joined(separator: ","))]},"#
                + #""scopeLogs":[{"scope":{"name":"s"},"logRecords":[\#(record)]}]}"#
        }
        return #"{"resourceLogs":[\#(resources.joined(separator: ","))]}"#
    }

    /// Lines logged with `message`.
    static func lines(_ harness: GatewayHarness, _ message: String) -> [String] {
        harness.logs.all.filter { $0.contains(#""msg":"\#(message)"#) }
    }

    @Test func connectWindowSettingsAreReadFromTheConfigFileAndValidated() throws {
        let file = try ConfigurationFile(
            parsing: Array(
                #"{"forwarding":{"connectWindowSeconds":60,"maxConnectsPerIdentity":3,"maxConnectsPerWindow":9}}"#
                    .utf8))
        var configuration = GatewayConfiguration(dataDirectory: "/tmp/unused")
        #expect(configuration.forwarding.connectWindow == .seconds(600))
        #expect(configuration.forwarding.maxConnectsPerIdentity == 20)
        #expect(configuration.forwarding.maxConnectsPerWindow == 6_000)
        file.apply(to: &configuration)
        #expect(configuration.forwarding.connectWindow == .seconds(60))
        #expect(configuration.forwarding.maxConnectsPerIdentity == 3)
        #expect(configuration.forwarding.maxConnectsPerWindow == 9)
        configuration.forwarding.maxConnectsPerIdentity = 0
        #expect(throws: GatewayError.self) { try configuration.validate() }
    }

    // MARK: - Outcomes

    @Test func eventBatchAnswered501IsDeadLetteredNotRetried() async throws {
        let upstream = try await ScriptedUpstream.start(uploadCodes: [501, 501, 501])
        let clock = ManualClock()
        let harness = try await ForwarderTests.harness(upstream, clock: clock)
        #expect(try await harness.post(Self.body, batchID: "nope").status == 200)
        #expect(
            await eventually {
                (try? await harness.gateway.store.deadLetterCount()) == 1 && harness.gateway.outboxBatches == 0
            })
        let letters = try await harness.gateway.store.deadLetters()
        #expect(letters.map(\.code) == [501])
        #expect(letters.map(\.message) == ["scripted 501"])
        #expect(letters.map(\.httpBatchID) == ["nope"])
        let logged = Self.lines(harness, "upstream refused a batch; moved to dead letters")
        #expect(logged.count == 1)
        #expect(logged.first?.contains(#""code":"501""#) == true)
        // No resend however far the clock moves.
        clock.advance(milliseconds: 600_000)
        #expect(await harness.forwarderSettles())
        #expect(upstream.uploads.count == 1)
        await harness.stop()
        await upstream.stop()
    }

    @Test func everyRetryAfterA401RegistersOnANewConnection() async throws {
        let upstream = try await ScriptedUpstream.start(uploadCodes: [401, 401])
        let clock = ManualClock()
        let harness = try await ForwarderTests.harness(upstream, clock: clock)
        #expect(try await harness.post(Self.body).status == 200)
        // Upload 401 → the session registers again and resends → 401 → back off.
        #expect(await eventually { Self.lines(harness, "upstream send failed, will retry").count == 1 })
        clock.advance(milliseconds: 60_000)
        harness.gateway.pokeForwarder()
        #expect(await eventually { harness.gateway.outboxBatches == 0 })
        let received = upstream.received
        #expect(received.map(\.bizType) == [1, 5, 1, 5, 1, 5])
        // Each upload went on its own connection, whose first request was CLIENT_CONNECT.
        let uploads = received.filter { $0.bizType == 5 }
        #expect(Set(uploads.map(\.connection)).count == 3)
        for upload in uploads {
            #expect(received.first { $0.connection == upload.connection }?.bizType == 1)
        }
        await harness.stop()
        await upstream.stop()
    }

    // MARK: - Connect attempts and connections

    @Test func connectAttemptsAreCappedPerIdentityAndOverallWithinTheWindow() async throws {
        let upstream = try await ScriptedUpstream.start()
        upstream.configure(dropUploads: true)
        let clock = ManualClock()
        let forwarding = ForwardingSettings(
            backoffBase: .milliseconds(1000), backoffMax: .milliseconds(1000), connectWindow: .seconds(600),
            maxConnectsPerIdentity: 3, maxConnectsPerWindow: 5)
        let harness = try await ForwarderTests.harness(upstream, clock: clock, forwarding: forwarding)
        let capped = "connect attempts capped; waiting"
        /// Steps the clock past the backoff until `condition` holds (at most 20 steps).
        func step(until condition: @Sendable () -> Bool) async -> Bool {
            for _ in 0..<20 {
                clock.advance(milliseconds: 1000)
                harness.gateway.pokeForwarder()
                if await eventually(within: .seconds(2), { condition() }) { return true }
            }
            return false
        }
        #expect(try await harness.post(Self.devices(1)).status == 200)
        #expect(await step { upstream.connects >= 3 && !Self.lines(harness, capped).isEmpty })
        #expect(upstream.connects == 3)
        // The second identity has attempts of its own left, but only two overall.
        #expect(try await harness.post(Self.devices(1, from: 1)).status == 200)
        #expect(await step { upstream.connects >= 5 && Self.lines(harness, capped).count >= 2 })
        #expect(upstream.connects == 5)
        // Further steps inside the window (past the 30 s rescans too) start nothing.
        for _ in 0..<5 {
            clock.advance(milliseconds: 10_000)
            #expect(await harness.forwarderSettles())
        }
        #expect(upstream.connects == 5)
        #expect(upstream.acceptedConnections == 5)
        // Once the first attempts leave the window, connecting resumes.
        clock.advance(milliseconds: 600_000)
        harness.gateway.pokeForwarder()
        #expect(await eventually { upstream.connects > 5 })
        #expect(harness.gateway.outboxBatches == 2)
        await harness.stop()
        await upstream.stop()
    }

    /// Many identities through a pool smaller than their number reconnect all the time; those
    /// connects end healthy (the pool evicts the session for another identity), so they do not use
    /// up the caps that exist for reconnects after failures.
    @Test func healthySessionsEvictedForOtherIdentitiesDoNotUseUpTheConnectWindow() async throws {
        let upstream = try await ScriptedUpstream.start()
        let clock = ManualClock()
        let forwarding = ForwardingSettings(
            maxConnections: 4, backoffBase: .milliseconds(1000), backoffMax: .milliseconds(1000),
            connectWindow: .seconds(600), maxConnectsPerIdentity: 2, maxConnectsPerWindow: 10)
        let harness = try await ForwarderTests.harness(upstream, clock: clock, forwarding: forwarding)
        let identities = 40
        for round in 0..<3 {
            #expect(try await harness.post(Self.devices(identities), batchID: "churn-\(round)").status == 200)
            #expect(await eventually(within: .seconds(60)) { harness.gateway.outboxBatches == 0 })
        }
        #expect(upstream.uploads.count == identities * 3)
        // Far more connects than either cap allows, none refused, all within one window.
        #expect(upstream.connects > 10)
        #expect(upstream.openConnections.peak <= 4)
        #expect(Self.lines(harness, "connect attempts capped; waiting").isEmpty)
        await harness.stop()
        await upstream.stop()
    }

    @Test func maxConnectionsBoundsUpstreamSocketsAndIdleOnesClose() async throws {
        let upstream = try await ScriptedUpstream.start()
        let clock = ManualClock()
        let forwarding = ForwardingSettings(
            maxConnections: 16, idleTimeout: .seconds(120), backoffBase: .seconds(1), backoffMax: .seconds(60))
        let harness = try await ForwarderTests.harness(upstream, clock: clock, forwarding: forwarding)
        let identities = 5_000
        #expect(try await harness.post(Self.devices(identities)).status == 200)
        #expect(await eventually(within: .seconds(180)) { harness.gateway.outboxBatches == 0 })
        #expect(upstream.uploads.count == identities)
        #expect(upstream.connects == identities)
        #expect(upstream.openConnections.peak <= 16)
        #expect(harness.gateway.forwarder?.openConnections ?? 0 <= 16)
        #expect(upstream.openConnections.now > 0)
        // Idle connections close after the idle timeout. (A worker may release its connection just
        // after the last delete, stamping it with the current time: step again while polling.)
        #expect(
            await eventually {
                clock.advance(milliseconds: 120_000)
                return upstream.openConnections.now == 0
            })
        #expect(harness.gateway.forwarder?.openConnections == 0)
        await harness.stop()
        await upstream.stop()
    }

    @Test func connectsTotalCountsRealHandshakesByResult() async throws {
        let upstream = try await ScriptedUpstream.start()
        let harness = try await ForwarderTests.harness(upstream)
        for index in 0..<5 {
            #expect(try await harness.post(Self.body, batchID: "m-\(index)").status == 200)
        }
        #expect(await eventually { harness.gateway.outboxBatches == 0 })
        #expect(upstream.connects == 1)
        let metrics = try await harness.request("GET", "/metrics", headers: []).bodyText
        #expect(metrics.contains(#"pulsegate_upstream_connects_total{result="ok"} 1"#))
        // A refused CONNECT (another device) is counted as rejected.
        upstream.configure(connectCode: 403)
        #expect(try await harness.post(Self.devices(1)).status == 200)
        #expect(await eventually { (try? await harness.gateway.store.deadLetterCount()) == 1 })
        let after = try await harness.request("GET", "/metrics", headers: []).bodyText
        #expect(after.contains(#"pulsegate_upstream_connects_total{result="ok"} 1"#))
        #expect(after.contains(#"pulsegate_upstream_connects_total{result="rejected"} 1"#))
        await harness.stop()
        await upstream.stop()
    }

    // MARK: - Policy sessions

    @Test func policyLookupsForUnknownAppsOpenNoUpstreamSession() async throws {
        let upstream = try await ScriptedUpstream.start()
        let harness = try await ForwarderTests.harness(upstream)
        for index in 0..<500 {
            let response = try await harness.request(
                "GET", "/v1/policy", headers: [("Apsio-App-Id", "random-\(index)")])
            #expect(response.status == 404)
        }
        #expect(upstream.acceptedConnections == 0)
        #expect(harness.gateway.policyCache.ownedSessionCount == 0)
        // An app with traffic is asked upstream.
        #expect(try await harness.post(Self.body, app: "shop").status == 200)
        #expect(await eventually { harness.gateway.outboxBatches == 0 })
        #expect(try await harness.request("GET", "/v1/policy", headers: [("Apsio-App-Id", "shop")]).status == 200)
        await harness.stop()
        await upstream.stop()
    }

    @Test func policySessionsAreBoundedAndCloseWhenIdle() async throws {
        let upstream = try await ScriptedUpstream.start()
        let apps = (0..<40).map { "app-\($0)" }
        let monotonic = ManualClock()
        let harness = try await ForwarderTests.harness(
            upstream, clock: monotonic, forwarding: ForwardingSettings(idleTimeout: .seconds(120)),
            policy: GatewayPolicy(allowedAppIDs: Set(apps)))
        for app in apps {
            monotonic.advance(milliseconds: 1)
            #expect(try await harness.request("GET", "/v1/policy", headers: [("Apsio-App-Id", app)]).status == 200)
        }
        #expect(upstream.connects == apps.count)
        #expect(harness.gateway.policyCache.ownedSessionCount == PolicyCache.maxOwnedSessions)
        #expect(await eventually { upstream.openConnections.now <= PolicyCache.maxOwnedSessions })
        #expect(upstream.openConnections.peak <= PolicyCache.maxOwnedSessions)
        monotonic.advance(milliseconds: 120_000)
        #expect(await eventually { harness.gateway.policyCache.ownedSessionCount == 0 })
        #expect(await eventually { upstream.openConnections.now == 0 })
        // The snapshots stay cached: answered without the upstream.
        #expect(try await harness.request("GET", "/v1/policy", headers: [("Apsio-App-Id", "app-0")]).status == 200)
        #expect(upstream.connects == apps.count)
        await harness.stop()
        await upstream.stop()
    }

    // MARK: - Clock steps

    /// `monotonicToo`: libfaketime without `FAKETIME_DONT_FAKE_MONOTONIC` steps both clocks.
    @Test(arguments: [false, true])
    func aBackwardClockStepDoesNotParkDueRows(monotonicToo: Bool) async throws {
        let port = try await ScriptedUpstream.freePort()
        let clock = ManualClock()
        let harness = try await GatewayHarness.start(
            clock: clock,
            connector: ForwarderTests.connector(port),
            forwarding: ForwardingSettings(backoffBase: .milliseconds(100), backoffMax: .seconds(60)),
            random: RandomSource.half)
        for index in 0..<3 {
            #expect(try await harness.post(Self.body, batchID: "w-\(index)").status == 200)
        }
        #expect(await eventually { !Self.lines(harness, "upstream send failed, will retry").isEmpty })
        // The wall clock steps back an hour; the upstream returns; real time moves on by a minute.
        clock.stepWallClock(by: -3_600_000)
        let upstream = try await ScriptedUpstream.start(port: port)
        clock.stepMonotonicClock(by: .milliseconds(monotonicToo ? -3_600_000 + 60_000 : 60_000))
        harness.gateway.pokeForwarder()
        #expect(await eventually { harness.gateway.outboxBatches == 0 })
        #expect(upstream.uploads.count == 3)
        await harness.stop()
        await upstream.stop()
    }

    @Test func aStoredNextAttemptFurtherAheadThanTheMaxBackoffIsDueNow() async throws {
        let port = try await ScriptedUpstream.freePort()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let forwarding = ForwardingSettings(backoffBase: .milliseconds(100), backoffMax: .seconds(60))
        let wall = ManualClock()
        let first = try await GatewayHarness.start(
            directory: directory, clock: wall, connector: ForwarderTests.connector(port), forwarding: forwarding,
            random: RandomSource.half)
        for index in 0..<3 {
            #expect(try await first.post(Self.body, batchID: "s-\(index)").status == 200)
        }
        #expect(await eventually { !Self.lines(first, "upstream send failed, will retry").isEmpty })
        await first.stop(removing: false)
        // Restart with the wall clock an hour behind the stored next-attempt times; nothing moves
        // the clocks afterwards.
        let upstream = try await ScriptedUpstream.start(port: port)
        let second = try await GatewayHarness.start(
            directory: directory, clock: ManualClock(wallClockMilliseconds: wall.wallClockMilliseconds - 3_600_000),
            connector: ForwarderTests.connector(port),
            forwarding: forwarding, random: RandomSource.half)
        #expect(await eventually { second.gateway.outboxBatches == 0 })
        #expect(upstream.uploads.count == 3)
        await second.stop(removing: false)
        await upstream.stop()
    }
}
