import OTLPProtobuf
import PulseHTTP
import PulseHashing
import PulseJSON
import PulseKit
import PulseTestSupport
import Testing

@testable import PulseGateway

/// The identity rules of docs/mapping.md ("Identity"): every fallback step in order, the derived
/// identity, and the `appIdentity` config that sets per-app defaults or refuses derived identities.
struct IdentityRulesTests {
    /// What a stock OpenTelemetry SDK sets by itself (Python 1.45: `Resource.create()` with
    /// `OTEL_SERVICE_NAME`).
    static let stockPython: [String: String] = [
        "service.name": "checkout", "service.instance.id": "8aec3a94-f1df-4f53-a4e4-45cc94e812fb",
        "telemetry.sdk.language": "python", "telemetry.sdk.name": "opentelemetry", "telemetry.sdk.version": "1.45.1",
    ]

    static func resolve(
        _ strings: [String: String], buildNumber: Int64? = nil, app: String = "shop",
        fallbacks: IdentityFallbacks = IdentityFallbacks()
    ) throws(IntakeRejection) -> ResolvedIdentity {
        try ResolvedIdentity(
            attributes: ResourceIdentityAttributes(strings: strings, buildNumber: buildNumber), index: 0, appID: app,
            fallbacks: fallbacks)
    }

    static func refusing(_ settings: AppIdentityPolicy.Settings = AppIdentityPolicy.Settings()) -> IdentityFallbacks {
        var settings = settings
        settings.missingIdentity = .refuse
        return IdentityFallbacks(app: settings)
    }

    // MARK: - Reading the resource

    @Test func theJSONResourceIsReadAsTheRulesExpect() throws {
        let list = [
            OTLP.string("device.id", "first"), OTLP.string("device.id", "second"),
            OTLP.string("app.installation.id", ""), OTLP.string("app.installation.id", "later"),
            OTLP.int("apsio.app.build_number", 42), OTLP.string("host.name", "build-7"), OTLP.int("os.name", 3),
            OTLP.string("unrelated.key", "x"),
        ].joined(separator: ",")
        func read(_ attributes: String) throws -> ResourceIdentityAttributes {
            let json = #"{"attributes":[\#(attributes)]}"#
            return ResourceIdentityAttributes(json: try JSONParser().parse(Array(json.utf8)).root)
        }
        // The first occurrence of a key counts, even when it is empty; only string values are read
        // (and apsio.app.build_number as an integer); keys the rules do not read are skipped.
        #expect(
            try read(list)
                == ResourceIdentityAttributes(strings: ["device.id": "first", "host.name": "build-7"], buildNumber: 42))
        #expect(ResourceIdentityAttributes(json: nil) == ResourceIdentityAttributes())
        #expect(try read(OTLP.string("apsio.app.build_number", "17")).buildNumber == 17)
    }

    // MARK: - Fallback steps

    @Test func installationComesFromAppInstallationIDThenServiceInstanceIDThenTheHeader() throws {
        let header = IdentityFallbacks(installationID: "header-install")
        let both = try Self.resolve(
            ["app.installation.id": "install-1", "service.instance.id": "instance-1"], fallbacks: header)
        #expect(both.installationID == "install-1")
        let instance = try Self.resolve(["service.instance.id": "instance-1"], fallbacks: header)
        #expect(instance.installationID == "instance-1")
        let headerOnly = try Self.resolve([:], fallbacks: header)
        #expect(headerOnly.installationID == "header-install")
        #expect(headerOnly.derivation?.fields.contains("installationId") == false)
    }

    @Test func deviceComesFromDeviceIDThenHostIDThenTheHeaderThenTheInstallation() throws {
        let header = IdentityFallbacks(deviceID: "header-device")
        let both = try Self.resolve(["device.id": "device-1", "host.id": "host-1"], fallbacks: header)
        #expect(both.deviceID == "device-1")
        let host = try Self.resolve(["host.id": "host-1"], fallbacks: header)
        #expect(host.deviceID == "host-1")
        let headerOnly = try Self.resolve(["service.instance.id": "instance-1"], fallbacks: header)
        #expect(headerOnly.deviceID == "header-device")
        #expect(headerOnly.installationID == "instance-1")
        let installationOnly = try Self.resolve(["service.instance.id": "instance-1"])
        #expect(installationOnly.deviceID == "instance-1")
        // And the installation stands in for a missing one: the host id.
        let hostOnly = try Self.resolve(["host.id": "host-1"])
        #expect(hostOnly.installationID == "host-1")
        #expect(hostOnly.deviceID == "host-1")
        // Under `refuse` too: these are rules, not derivations.
        let rest = ["os.type": "linux", "telemetry.sdk.name": "opentelemetry"]
        let strict = Self.refusing()
        #expect(try Self.resolve(rest.merging(["host.id": "host-1"]) { $1 }, fallbacks: strict).deviceID == "host-1")
        #expect(
            try Self.resolve(rest.merging(["service.instance.id": "i-1"]) { $1 }, fallbacks: strict).installationID
                == "i-1")
    }

    @Test func platformComesFromTheOSThenTheHeaderThenTheAppDefaultThenTheSDKLanguage() throws {
        let ids = ["device.id": "d"]
        let header = IdentityFallbacks(platform: "android", app: AppIdentityPolicy.Settings(platform: "ios"))
        let configured = IdentityFallbacks(app: AppIdentityPolicy.Settings(platform: "ios"))
        func platform(_ extra: [String: String], _ fallbacks: IdentityFallbacks = IdentityFallbacks()) throws
            -> String
        {
            try Self.resolve(ids.merging(extra) { $1 }, fallbacks: fallbacks).platform
        }
        let all = ["os.name": "iOS", "os.type": "darwin", "telemetry.sdk.language": "swift"]
        #expect(try platform(all, header) == "ios")
        #expect(try platform(["os.type": "Linux", "telemetry.sdk.language": "python"], header) == "linux")
        #expect(try platform(["telemetry.sdk.language": "python"], header) == "android")
        #expect(try platform(["telemetry.sdk.language": "python"], configured) == "ios")
        #expect(try platform(["telemetry.sdk.language": "Python"]) == "python")
        let unknown = try Self.resolve(ids)
        #expect(unknown.platform == "unknown")
        #expect(unknown.derivation == ResolvedIdentity.Derivation(fields: ["sdkVersion", "platform"], sources: []))
    }

    @Test func sdkVersionComesFromTheResourceThenTheHeaderThenTheAppDefault() throws {
        let ids = ["device.id": "d", "os.type": "linux"]
        let header = IdentityFallbacks(sdkVersion: "header-sdk/1", app: AppIdentityPolicy.Settings(sdkVersion: "app/2"))
        let configured = IdentityFallbacks(app: AppIdentityPolicy.Settings(sdkVersion: "app/2"))
        let full = ids.merging(["telemetry.sdk.name": "opentelemetry", "telemetry.sdk.version": "1.45.1"]) { $1 }
        #expect(try Self.resolve(full, fallbacks: header).sdkVersion == "opentelemetry/1.45.1")
        #expect(
            try Self.resolve(ids.merging(["telemetry.sdk.version": "9"]) { $1 }, fallbacks: header).sdkVersion == "9")
        #expect(try Self.resolve(ids, fallbacks: header).sdkVersion == "header-sdk/1")
        #expect(try Self.resolve(ids, fallbacks: configured).sdkVersion == "app/2")
        let unknown = try Self.resolve(ids)
        #expect(unknown.sdkVersion == "unknown")
        #expect(unknown.derivation?.fields == ["sdkVersion"])
    }

    @Test func optionalFieldsUseTheHeaderThenTheAppDefault() throws {
        let defaults = AppIdentityPolicy.Settings(
            platform: "android", sdkVersion: "app-sdk/1", appVersion: "9.9", buildNumber: 99,
            packageName: "com.example.default", deviceType: "kiosk")
        let configured = try Self.resolve(["device.id": "d"], fallbacks: IdentityFallbacks(app: defaults))
        #expect(configured.appVersion == "9.9")
        #expect(configured.buildNumber == 99)
        #expect(configured.packageName == "com.example.default")
        #expect(configured.deviceType == "kiosk")
        #expect(configured.platform == "android")
        #expect(configured.sdkVersion == "app-sdk/1")
        #expect(configured.derivation == nil)
        let headers = IdentityFallbacks(
            appVersion: "1.0", buildNumber: 10, packageName: "com.example.header", deviceType: "phone", app: defaults)
        let fromHeaders = try Self.resolve(["device.id": "d"], fallbacks: headers)
        #expect(fromHeaders.appVersion == "1.0")
        #expect(fromHeaders.buildNumber == 10)
        #expect(fromHeaders.packageName == "com.example.header")
        #expect(fromHeaders.deviceType == "phone")
        let fromResource = try Self.resolve(
            [
                "device.id": "d", "service.version": "3.0", "apsio.app.package_name": "com.example.resource",
                "device.model.identifier": "iPhone15,2",
            ], buildNumber: 30, fallbacks: headers)
        #expect(fromResource.appVersion == "3.0")
        #expect(fromResource.buildNumber == 30)
        #expect(fromResource.packageName == "com.example.resource")
        #expect(fromResource.deviceType == "iPhone15,2")
    }

    @Test func aStockPythonResourceNeedsNothingDerived() throws {
        let identity = try Self.resolve(Self.stockPython, fallbacks: Self.refusing())
        #expect(identity.installationID == "8aec3a94-f1df-4f53-a4e4-45cc94e812fb")
        #expect(identity.deviceID == identity.installationID)
        #expect(identity.platform == "python")
        #expect(identity.sdkVersion == "opentelemetry/1.45.1")
        #expect(identity.derivation == nil)
    }

    // MARK: - Derived identity

    @Test func aResourceWithoutIdsGetsAStableDocumentedDerivedIdentity() throws {
        let resource = ["service.name": "checkout", "host.name": "build-7", "os.type": "linux"]
        let identity = try Self.resolve(resource)
        // The documented formula, computed independently.
        let expected =
            "derived-"
            + OTLP.fieldHash([
                "pulsegate.derived-identity.1", "shop", "service.name", "checkout", "host.name", "build-7",
            ])
            .prefix(32)
        #expect(identity.installationID == expected)
        #expect(identity.deviceID == expected)
        #expect(
            identity.derivation
                == ResolvedIdentity.Derivation(
                    fields: ["installationId", "deviceId", "sdkVersion"], sources: ["service.name", "host.name"]))
        #expect(identity.platform == "linux")
        // Stable: the same resource gives the same identity in every request, whatever else changes.
        let again = try Self.resolve(
            resource.merging(["os.version": "6.1", "service.version": "2"]) { $1 },
            fallbacks: IdentityFallbacks(sdkVersion: "x/1"))
        #expect(again.installationID == expected)
        // Another service, host or app is another identity.
        let others = [
            try Self.resolve(resource.merging(["service.name": "billing"]) { $1 }),
            try Self.resolve(resource.merging(["host.name": "build-8"]) { $1 }),
            try Self.resolve(resource, app: "news"),
            try Self.resolve(resource.merging(["service.namespace": "shop"]) { $1 }),
        ].map(\.installationID)
        #expect(Set(others + [expected]).count == 5)
        // A resource with nothing at all still gets one identity per app.
        let bare = try Self.resolve([:])
        #expect(
            bare.installationID == "derived-" + OTLP.fieldHash(["pulsegate.derived-identity.1", "shop"]).prefix(32))
        #expect(bare.platform == "unknown")
        #expect(bare.sdkVersion == "unknown")
        #expect(bare.derivation?.fields == ["installationId", "deviceId", "sdkVersion", "platform"])
    }

    @Test func headersKeepAnIdentityFromBeingDerived() throws {
        let identity = try Self.resolve(["service.name": "checkout"], fallbacks: IdentityFallbacks(deviceID: "d-1"))
        #expect(identity.installationID == "d-1")
        #expect(identity.derivation?.fields == ["sdkVersion", "platform"])
    }

    @Test func derivedIdentityReachesTheBatchAndTheConnectPayload() throws {
        let json = OTLP.logs(
            resource: [OTLP.string("service.name", "checkout"), OTLP.string("host.name", "build-7")],
            records: [OTLP.record(1)])
        let mapped = try OTLP.map(json, signal: .logs)
        let id =
            "derived-"
            + OTLP.fieldHash([
                "pulsegate.derived-identity.1", "shop", "service.name", "checkout", "host.name", "build-7",
            ])
            .prefix(32)
        let payload = OTLP.text(mapped.drafts[0].payload)
        #expect(payload.contains(#""installationId":"\#(id)","deviceId":"\#(id)""#), "\(payload)")
        #expect(payload.contains(#""sdkVersion":"unknown","platform":"unknown""#), "\(payload)")
        #expect(OTLP.text(mapped.drafts[0].identity).contains(#""deviceId":"\#(id)""#))
        #expect(mapped.derivedIdentities.map(\.installationID) == [id])
        // Another batch of the same resource: same identity key, so the same upstream connection.
        let later = try OTLP.map(
            OTLP.logs(
                resource: [OTLP.string("service.name", "checkout"), OTLP.string("host.name", "build-7")],
                records: [OTLP.record(2), OTLP.record(3)]), signal: .logs, batchID: "b-2")
        #expect(later.drafts[0].identityKey == mapped.drafts[0].identityKey)
        // A resource with its own ids counts as not derived.
        #expect(try OTLP.map(OTLP.logs(records: [OTLP.record(1)]), signal: .logs).derivedIdentities.isEmpty)
    }

    // MARK: - Refusing derived identities

    @Test func anAppThatRefusesDerivedIdentitiesGetsTheBadRequestWithItsMessage() throws {
        let ids = #expect(throws: IntakeRejection.self) {
            try Self.resolve(["service.name": "checkout"], fallbacks: Self.refusing())
        }
        #expect(ids?.status == .badRequest)
        #expect(
            ids?.message
                == "resource 0: missing deviceId and installationId (resource attribute device.id, host.id, "
                + "app.installation.id or service.instance.id, or header Apsio-Device-Id or Apsio-Installation-Id)")
        let sdk = #expect(throws: IntakeRejection.self) {
            try Self.resolve(["device.id": "d", "os.type": "linux"], fallbacks: Self.refusing())
        }
        #expect(
            sdk?.message
                == "resource 0: missing sdkVersion (resource attributes telemetry.sdk.name and telemetry.sdk.version, "
                + "header Apsio-Sdk-Version, or appIdentity sdkVersion)")
        let platform = #expect(throws: IntakeRejection.self) {
            try Self.resolve(["device.id": "d", "telemetry.sdk.name": "x"], fallbacks: Self.refusing())
        }
        #expect(platform?.message.hasPrefix("resource 0: missing platform") == true)
        // The app's defaults still fill what they set.
        let filled = try Self.resolve(
            ["device.id": "d"],
            fallbacks: Self.refusing(AppIdentityPolicy.Settings(platform: "linux", sdkVersion: "curl/8")))
        #expect(filled.platform == "linux")
        #expect(filled.sdkVersion == "curl/8")
    }

    // MARK: - Config

    @Test func appIdentityConfigIsParsedMergedPerFieldAndReloadable() throws {
        let file = try ConfigurationFile(
            parsing: Array(
                #"""
                {"appIdentity": {"default": {"platform": "Linux", "sdkVersion": "curl/8", "buildNumber": 7},
                                 "apps": {"shop": {"missingIdentity": "refuse", "platform": "android",
                                                   "appVersion": "2.0", "packageName": "com.example.shop",
                                                   "deviceType": "kiosk"}}}}
                """#.utf8))
        let policy = file.policy().appIdentity
        #expect(
            policy.settings(for: "news")
                == AppIdentityPolicy.Settings(platform: "linux", sdkVersion: "curl/8", buildNumber: 7))
        #expect(
            policy.settings(for: "shop")
                == AppIdentityPolicy.Settings(
                    missingIdentity: .refuse, platform: "android", sdkVersion: "curl/8", appVersion: "2.0",
                    buildNumber: 7, packageName: "com.example.shop", deviceType: "kiosk"))
        #expect(!policy.settings(for: "shop").derivesMissingIdentity)
        #expect(policy.settings(for: "news").derivesMissingIdentity)
        #expect(GatewayPolicy().appIdentity.settings(for: "shop").derivesMissingIdentity)
        var configuration = GatewayConfiguration(dataDirectory: "/tmp/x")
        file.apply(to: &configuration)
        #expect(configuration.policy.appIdentity == policy)
        // The intake gives the request's app its settings.
        let headers = try IntakeHeaders(["Apsio-App-Id": "shop"], policy: configuration.policy)
        #expect(headers.fallbacks.app.missingIdentity == .refuse)
    }

    @Test func appIdentityConfigErrorsNameTheKeyPath() {
        let cases: [(String, String)] = [
            (#"{"appIdentity": []}"#, "appIdentity: must be an object"),
            (#"{"appIdentity": {"defaults": {}}}"#, "appIdentity.defaults: unknown config key"),
            (
                #"{"appIdentity": {"default": {"missingIdentity": "drop"}}}"#,
                "appIdentity.default.missingIdentity: must be"
            ),
            (
                #"{"appIdentity": {"apps": {"shop": {"platform": ""}}}}"#,
                "appIdentity.apps.shop.platform: must not be empty"
            ),
            (
                #"{"appIdentity": {"apps": {"shop": {"buildNumber": "7"}}}}"#,
                "appIdentity.apps.shop.buildNumber: must be an integer"
            ),
            (
                #"{"appIdentity": {"apps": {"shop": {"deviceId": "d"}}}}"#,
                "appIdentity.apps.shop.deviceId: unknown config key"
            ),
            (#"{"appIdentity": {"apps": {"a/b": {}}}}"#, "app ids must be"),
            (#"{"appIdentity": {"apps": []}}"#, "appIdentity.apps: must be an object"),
        ]
        for (json, named) in cases {
            let error = #expect(throws: GatewayError.self) { try ConfigurationFile(parsing: Array(json.utf8)) }
            #expect(error?.message.contains(named) == true, "\(json): \(error?.message ?? "-")")
        }
    }

    // MARK: - Through the intake

    @Test func theIntakeCountsAndLogsDerivedIdentitiesAndRefusesThemWhereConfigured() async throws {
        var policy = GatewayPolicy()
        policy.appIdentity = AppIdentityPolicy(apps: ["strict": AppIdentityPolicy.Settings(missingIdentity: .refuse)])
        let harness = try await GatewayHarness.start(policy: policy)
        defer { harness.directory.remove() }
        let bare = OTLP.logs(resource: [OTLP.string("service.name", "checkout")], records: [OTLP.record(1)])
        let refused = try await harness.post(bare, app: "strict")
        #expect(refused.status == 400)
        #expect(refused.bodyText.contains("resource 0: missing deviceId and installationId"), "\(refused.bodyText)")
        for batch in 1...3 {
            let accepted = try await harness.post(bare, batchID: "derived-\(batch)")
            #expect(accepted.status == 200)
        }
        // A duplicate is not counted again.
        #expect(try await harness.post(bare, batchID: "derived-1").header("Apsio-Duplicate") == "true")
        let metrics = try await harness.request("GET", "/metrics", headers: []).bodyText
        #expect(metrics.contains("pulsegate_derived_identities_total 3\n"), "\(metrics)")
        // One line per app per minute; the next one says how many were held back.
        let id =
            "derived-"
            + OTLP.fieldHash(["pulsegate.derived-identity.1", "shop", "service.name", "checkout"]).prefix(32)
        func lines() -> [String] {
            harness.logs.all.filter { $0.contains("identity derived for a resource that does not carry it") }
        }
        #expect(lines().count == 1)
        let line = try #require(lines().first)
        #expect(line.contains(#""app":"shop""#))
        #expect(line.contains(#""installationId":"\#(id)""#))
        #expect(line.contains(#""derived":"installationId,deviceId,sdkVersion,platform""#))
        #expect(line.contains(#""from":"service.name""#))
        harness.clock.advance(milliseconds: GatewayIntake.conflictLogIntervalMilliseconds)
        #expect(try await harness.post(bare, batchID: "derived-4").status == 200)
        #expect(lines().count == 2)
        #expect(lines().last?.contains(#""suppressed":"2""#) == true)
        // A reload (SIGHUP) that makes `shop` refuse applies to the next request.
        var strict = harness.gateway.policy
        strict.appIdentity.defaults.missingIdentity = .refuse
        try harness.gateway.reload(strict)
        #expect(try await harness.post(bare, batchID: "derived-5").status == 400)
        await harness.stop()
    }
}
