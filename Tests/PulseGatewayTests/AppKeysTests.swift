import PulseHTTP
import PulseKit
import PulseTestSupport
import Testing

@testable import PulseGateway

/// App keys (config `appKeys`, 401): the check, its configuration and its answers.
@Suite struct AppKeysTests {
    static let keys = try! AppKeys(["shop": ["key-1", "key-2"], "news": ["n3ws-k3y"]])

    @Test func keysOfTheAppAreAcceptedAndNothingElse() {
        #expect(Self.keys.accepts("key-1", app: "shop"))
        #expect(Self.keys.accepts("key-2", app: "shop"))
        #expect(!Self.keys.accepts("n3ws-k3y", app: "shop"))  // another app's key
        #expect(!Self.keys.accepts("key-", app: "shop"))  // a prefix
        #expect(!Self.keys.accepts("key-10", app: "shop"))  // an extension
        #expect(!Self.keys.accepts("KEY-1", app: "shop"))  // keys are case-sensitive
        #expect(!Self.keys.accepts("", app: "shop"))
        #expect(!Self.keys.accepts(nil, app: "shop"))
        #expect(Self.keys.accepts(nil, app: "open-app"))  // apps without keys stay open
        #expect(Self.keys.requiresKey(app: "news"))
        #expect(!Self.keys.requiresKey(app: "open-app"))
        #expect(Self.keys.apps == ["news", "shop"])
        #expect(AppKeys().isEmpty)
    }

    @Test func printingShowsAppsAndCountsButNeverAKey() {
        let texts = [
            Self.keys.description, Self.keys.debugDescription, String(reflecting: Self.keys),
            "\(GatewayPolicy(appKeys: Self.keys))", String(reflecting: GatewayPolicy(appKeys: Self.keys)),
        ]
        var dumped = ""
        dump(GatewayPolicy(appKeys: Self.keys), to: &dumped)
        for text in texts + [dumped] {
            #expect(!text.contains("key-1") && !text.contains("key-2") && !text.contains("n3ws"), "\(text)")
        }
        #expect(Self.keys.description == "AppKeys(news: 1 keys, shop: 2 keys)")
    }

    @Test(arguments: [
        (["bad/app": ["k"]], "app ids"),
        (["shop": []], "empty key list"),
        (["shop": ["has space"]], "visible ASCII"),
        (["shop": [""]], "visible ASCII"),
        (["shop": ["ключ"]], "visible ASCII"),
        (["shop": [String(repeating: "k", count: 513)]], "visible ASCII"),
    ])
    func invalidKeysAreConfigurationErrorsThatDoNotEchoTheKey(keys: [String: [String]], named: String) {
        let error = #expect(throws: GatewayError.self) { try AppKeys(keys) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains(named) == true)
        for key in keys.values.joined() where !key.isEmpty {
            #expect(error?.message.contains(key) == false)
        }
    }

    @Test func bearerTokens() {
        func token(_ value: String?) -> String? {
            var headers = HTTPHeaders()
            if let value { headers.set(name: "Authorization", value: value) }
            return IntakeHeaders.bearerToken(headers)
        }
        #expect(token("Bearer key-1") == "key-1")
        #expect(token("bearer key-1") == "key-1")
        #expect(token("BEARER   key-1  ") == "key-1")
        #expect(token("Bearer") == nil)
        #expect(token("Bearer ") == nil)
        #expect(token("Bearerkey-1") == nil)
        #expect(token("Basic a2V5LTE=") == nil)
        #expect(token(nil) == nil)
    }

    @Test func theSharedCheckOrdersBadRequestForbiddenUnauthorized() throws {
        let policy = GatewayPolicy(defaultAppID: "shop", allowedAppIDs: ["shop", "news"], appKeys: Self.keys)
        func rejection(_ headers: HTTPHeaders) -> IntakeRejection? {
            #expect(throws: IntakeRejection.self) { try IntakeHeaders.authorizedAppID(headers, policy: policy) }
        }
        #expect(rejection(["Apsio-App-Id": "a b"])?.status == .badRequest)
        #expect(rejection(["Apsio-App-Id": "other", "Authorization": "Bearer key-1"])?.status == .forbidden)
        let missing = rejection(["Apsio-App-Id": "news"])
        #expect(missing?.status == .unauthorized)
        #expect(missing?.message == "missing or invalid app key")
        #expect(rejection(["Authorization": "Bearer n3ws-k3y"])?.status == .unauthorized)  // default app: shop
        #expect(try IntakeHeaders.authorizedAppID(["Authorization": "Bearer key-2"], policy: policy) == "shop")
        #expect(
            try IntakeHeaders.authorizedAppID(
                ["Apsio-App-Id": "news", "Authorization": "Bearer n3ws-k3y"], policy: policy)
                == "news")
        // For an App ID from a query parameter.
        #expect(throws: IntakeRejection.self) {
            try IntakeHeaders.authorize(app: "news", headers: [:], policy: policy)
        }
        try IntakeHeaders.authorize(app: "news", headers: ["Authorization": "Bearer n3ws-k3y"], policy: policy)
    }

    @Test func configFileKeyIsParsedValidatedAndReloadable() throws {
        let file = try ConfigurationFile(parsing: Array(#"{"appKeys":{"shop":["key-1","key-2"]}}"#.utf8))
        let policy = file.policy()
        #expect(policy.appKeys.accepts("key-2", app: "shop"))
        #expect(!policy.appKeys.accepts("key-3", app: "shop"))
        var configuration = GatewayConfiguration(dataDirectory: "/tmp/x")
        file.apply(to: &configuration)
        #expect(configuration.policy.appKeys == policy.appKeys)
        for bad in [#"{"appKeys":["k"]}"#, #"{"appKeys":{"shop":"k"}}"#, #"{"appKeys":{"shop":[1]}}"#] {
            let error = #expect(throws: GatewayError.self) { try ConfigurationFile(parsing: Array(bad.utf8)) }
            #expect(error?.message.contains("appKeys") == true, "\(bad)")
        }
        let empty = #expect(throws: GatewayError.self) {
            try ConfigurationFile(parsing: Array(#"{"appKeys":{"shop":[]}}"#.utf8))
        }
        #expect(empty?.message.contains("empty key list") == true)
    }

    @Test func intakeAnswersUnauthorizedWithChallengeAndNeverLogsTheKey() async throws {
        let harness = try await GatewayHarness.start(policy: GatewayPolicy(appKeys: Self.keys))
        let body = IntakeHTTPTests.body
        let missing = try await harness.post(body, batchID: "k-1")
        #expect(missing.status == 401)
        #expect(missing.header("WWW-Authenticate") == "Bearer")
        #expect(missing.bodyText == #"{"code":16,"message":"missing or invalid app key"}"#)
        let wrong = try await harness.post(
            body, batchID: "k-1", extraHeaders: [("Authorization", "Bearer wrong-secret")])
        #expect(wrong.status == 401)
        let protobuf = try await harness.request(
            body: [], headers: [("Content-Type", "application/x-protobuf"), ("Apsio-App-Id", "shop")])
        #expect(protobuf.status == 401)
        #expect(protobuf.header("Content-Type") == "application/x-protobuf")
        #expect(protobuf.header("WWW-Authenticate") == "Bearer")
        #expect(try IntakeHTTPTests.count("dedup", in: harness.directory) == 0)
        let right = try await harness.post(body, batchID: "k-1", extraHeaders: [("Authorization", "Bearer key-1")])
        #expect(right.status == 200)
        #expect(right.header("Apsio-Duplicate") == nil)
        #expect(try await harness.post(body, app: "open-app").status == 200)
        let metrics = try await harness.request("GET", "/metrics", headers: []).bodyText
        #expect(metrics.contains(#"pulsegate_http_requests_total{route="/v1/logs",code="401"} 3"#))
        // Rotation: a SIGHUP-style reload swaps the keys at once.
        var rotated = harness.gateway.policy
        rotated.appKeys = try AppKeys(["shop": ["key-9"]])
        try harness.gateway.reload(rotated)
        let old = try await harness.post(body, batchID: "k-2", extraHeaders: [("Authorization", "Bearer key-1")])
        #expect(old.status == 401)
        let new = try await harness.post(body, batchID: "k-2", extraHeaders: [("Authorization", "Bearer key-9")])
        #expect(new.status == 200)
        await harness.stop()
        for line in harness.logs.all {
            #expect(!line.contains("key-1") && !line.contains("wrong-secret") && !line.contains("key-9"), "\(line)")
        }
    }

    @Test func policyAndDiagnosticsEndpointsUseTheSameCheck() async throws {
        let harness = try await GatewayHarness.start(policy: GatewayPolicy(appKeys: Self.keys))
        let policyMissing = try await harness.request("GET", "/v1/policy", headers: [("Apsio-App-Id", "shop")])
        #expect(policyMissing.status == 401)
        #expect(policyMissing.header("WWW-Authenticate") == "Bearer")
        let policyWithKey = try await harness.request(
            "GET", "/v1/policy", headers: [("Apsio-App-Id", "shop"), ("Authorization", "Bearer key-2")])
        // No upstream in this harness: authorized, but nothing can be cached (503), never 401.
        #expect(policyWithKey.status == 503)
        let diagnosticsWrong = try await harness.request(
            "GET", "/v1/diagnostics?app=news", headers: [("Authorization", "Bearer key-1")])
        #expect(diagnosticsWrong.status == 401)
        let diagnosticsRight = try await harness.request(
            "GET", "/v1/diagnostics?app=news", headers: [("Authorization", "Bearer n3ws-k3y")])
        #expect(diagnosticsRight.status == 200)
        #expect(diagnosticsRight.bodyText.contains(#""app":"news""#))
        // An upload refused with 401 does not learn the policy revision.
        let upload = try await harness.post(IntakeHTTPTests.body, batchID: "k-3")
        #expect(upload.status == 401)
        #expect(upload.header("Apsio-Policy-Revision") == nil)
        await harness.stop()
    }
}
