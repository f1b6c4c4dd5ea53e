import PulseHTTP
import PulseJSON
import PulseTestSupport
import Testing

@testable import PulseGateway

/// The per-app admission check (``AppAdmission``) and the `appLimits` configuration, with a clock
/// the tests step (no sleeping).
@Suite struct AppAdmissionTests {
    static func policy(_ limits: AppLimits) -> GatewayPolicy {
        var policy = GatewayPolicy(retryAfterSeconds: 7)
        policy.appLimits = limits
        return policy
    }

    /// Admits `app` and returns the rejection, if any, and the reasons reported.
    static func admit(
        _ admission: AppAdmission, _ app: String, _ policy: GatewayPolicy,
        depth: GatewayStore.AppDepth = GatewayStore.AppDepth()
    ) -> (IntakeRejection?, [AppAdmission.Reason]) {
        var reasons: [AppAdmission.Reason] = []
        do {
            try admission.admit(app: app, policy: policy, depth: depth) { reasons.append($0) }.release()
            return (nil, reasons)
        } catch {
            return (error, reasons)
        }
    }

    @Test func theTokenBucketAdmitsTheBurstThenOnePerRefillAndSaysWhenToRetry() {
        let clock = ManualClock()
        let admission = AppAdmission(clock: clock.clock)
        let policy = Self.policy(AppLimits(apps: ["flood": .init(requestsPerSecond: 0.5, burst: 3)]))
        for _ in 0..<3 { #expect(Self.admit(admission, "flood", policy).0 == nil) }
        let (refused, reasons) = Self.admit(admission, "flood", policy)
        #expect(refused?.status == .tooManyRequests)
        #expect(refused?.retryAfterSeconds == 2)  // one token at 0.5 per second
        #expect(reasons == [.rate])
        // Another app is not limited at all.
        for _ in 0..<10 { #expect(Self.admit(admission, "calm", policy).0 == nil) }
        clock.advance(milliseconds: 1_000)
        #expect(Self.admit(admission, "flood", policy).0?.retryAfterSeconds == 1)
        clock.advance(milliseconds: 1_000)
        #expect(Self.admit(admission, "flood", policy).0 == nil)
        #expect(Self.admit(admission, "flood", policy).0 != nil)
        // A long pause refills to the burst, not beyond.
        clock.advance(milliseconds: 3_600_000)
        for _ in 0..<3 { #expect(Self.admit(admission, "flood", policy).0 == nil) }
        #expect(Self.admit(admission, "flood", policy).0 != nil)
    }

    @Test func theOutboxShareRefusesOnlyTheAppOverIt() {
        let admission = AppAdmission(clock: ManualClock().clock)
        let policy = Self.policy(
            AppLimits(default: .init(outboxBatches: 10), apps: ["big": .init(outboxBytes: 1_000)]))
        let full = GatewayStore.AppDepth(rows: 10, bytes: 5)
        let (refused, reasons) = Self.admit(admission, "small", policy, depth: full)
        #expect(refused?.status == .tooManyRequests)
        #expect(refused?.retryAfterSeconds == 7)
        #expect(reasons == [.outboxBatches])
        #expect(Self.admit(admission, "small", policy, depth: .init(rows: 9, bytes: 5)).0 == nil)
        // "big" inherits the default's 10 batches and adds its byte share.
        #expect(Self.admit(admission, "big", policy, depth: .init(rows: 9, bytes: 999)).0 == nil)
        #expect(Self.admit(admission, "big", policy, depth: .init(rows: 9, bytes: 1_000)).1 == [.outboxBytes])
        #expect(Self.admit(admission, "big", policy, depth: .init(rows: 10, bytes: 0)).1 == [.outboxBatches])
    }

    @Test func requestsInFlightCountAgainstTheShareUntilReleased() throws {
        let admission = AppAdmission(clock: ManualClock().clock)
        let policy = Self.policy(AppLimits(apps: ["flood": .init(outboxBatches: 3)]))
        let empty = GatewayStore.AppDepth()
        let tickets = try (0..<3).map { _ in try admission.admit(app: "flood", policy: policy, depth: empty) { _ in } }
        #expect(Self.admit(admission, "flood", policy).1 == [.outboxBatches])
        tickets[0].release()
        #expect(Self.admit(admission, "flood", policy).0 == nil)
        // Committed rows replace the claims of released requests.
        for ticket in tickets.dropFirst() { ticket.release() }
        #expect(Self.admit(admission, "flood", policy, depth: .init(rows: 3, bytes: 0)).1 == [.outboxBatches])
        #expect(Self.admit(admission, "flood", policy, depth: .init(rows: 2, bytes: 0)).0 == nil)
    }

    @Test func bucketsAreBoundedAndFullOnesAreForgotten() {
        let clock = ManualClock()
        let admission = AppAdmission(clock: clock.clock)
        let policy = Self.policy(AppLimits(default: .init(requestsPerSecond: 1, burst: 1)))
        for index in 0..<AppAdmission.maxBuckets { #expect(Self.admit(admission, "app-\(index)", policy).0 == nil) }
        // Every bucket is empty: a new app is refused until one refills.
        #expect(Self.admit(admission, "newcomer", policy).0?.status == .tooManyRequests)
        clock.advance(milliseconds: 1_000)
        #expect(Self.admit(admission, "newcomer", policy).0 == nil)
    }

    @Test func theConfigShapeIsParsedAndEveryProblemIsListedWithItsPath() throws {
        let good = #"""
            {"outboxMaxBatches": 100, "allowedAppIds": ["shop", "news"],
             "appLimits": {"default": {"outboxBatches": 50},
                           "apps": {"shop": {"outboxBytes": 4096, "requestsPerSecond": 2.5, "burst": 5}}}}
            """#
        let file = try ConfigurationFile(parsing: Array(good.utf8))
        let policy = file.policy()
        #expect(
            policy.appLimits.limit(for: "shop")
                == .init(outboxBatches: 50, outboxBytes: 4096, requestsPerSecond: 2.5, burst: 5))
        #expect(policy.appLimits.limit(for: "news") == .init(outboxBatches: 50))
        #expect(policy.problems().isEmpty)
        let metrics = AppMetrics()
        metrics.configure(apps: policy.labelledApps)
        #expect(metrics.label(for: "shop") == "shop")
        #expect(metrics.label(for: "made-up") == "other")

        let bad = #"""
            {"outboxMaxBatches": 100, "allowedAppIds": ["shop"], "retryAfterSeconds": "soon",
             "appLimits": {"default": {"burst": 3, "outboxBatches": 0},
                           "apps": {"shop": {"requestsPerSecond": -1, "color": "red"}, "bad app": {}},
                           "extra": {}}}
            """#
        let (_, parseProblems) = ConfigurationFile.check(Array(bad.utf8))
        let paths = Set(parseProblems.map(\.path))
        #expect(
            paths == [
                "retryAfterSeconds", "appLimits.default.outboxBatches", "appLimits.apps.shop.requestsPerSecond",
                "appLimits.apps.shop.color", "appLimits.apps.bad app", "appLimits.extra",
            ], "\(parseProblems)")

        // Cross-field rules, checked on the resolved policy.
        var crossed = GatewayPolicy(allowedAppIDs: ["shop"], outboxMaxBatches: 100)
        crossed.appLimits = AppLimits(
            default: .init(burst: 3), apps: ["news": .init(outboxBatches: 500), "shop": .init(burst: 2)])
        let crossPaths = crossed.problems().map(\.path)
        #expect(
            crossPaths.sorted() == [
                "appLimits.apps.news", "appLimits.apps.news.outboxBatches", "appLimits.apps.shop.burst",
                "appLimits.default.burst",
            ], "\(crossed.problems())")
    }
}
