import PulseHTTP
import PulseKit

/// The Apsio request headers the intake reads, validated.
struct IntakeHeaders: Sendable {
    /// `Apsio-Batch-Id` when present.
    var batchID: String?
    /// `Apsio-App-Id`, or the configured default.
    var appID: String
    /// `Apsio-Sent-At` as epoch milliseconds, when present.
    var sentAt: Int64?
    /// Identity fallbacks (`Apsio-Device-Id`, …) by identity field.
    var fallbacks: IdentityFallbacks

    static let batchIDHeader = "Apsio-Batch-Id"
    static let appIDHeader = "Apsio-App-Id"
    static let sentAtHeader = "Apsio-Sent-At"

    /// Reads and validates the headers: first the App ID and its authorization
    /// (``authorizedAppID(_:policy:)``), then `Apsio-Batch-Id` and `Apsio-Sent-At`.
    ///
    /// - Throws: an ``IntakeRejection`` with 400 (malformed batch id, app id or sent-at, or a
    ///   missing app id without a default), 403 (app not allowed) or 401 (app key missing or wrong).
    init(_ headers: HTTPHeaders, policy: GatewayPolicy) throws(IntakeRejection) {
        appID = try Self.authorizedAppID(headers, policy: policy)
        if let value = headers[Self.batchIDHeader] {
            guard Self.isValidIdentifier(value) else {
                throw IntakeRejection(
                    .badRequest, "Apsio-Batch-Id must be 1-128 characters of A-Z a-z 0-9 . _ ~ : -")
            }
            batchID = value
        }
        if let value = headers[Self.sentAtHeader] {
            guard let parsed = Self.parseTimestamp(value) else {
                throw IntakeRejection(
                    .badRequest, "Apsio-Sent-At must be RFC 3339 (2026-05-01T10:00:00Z) or epoch milliseconds")
            }
            sentAt = parsed
        }
        fallbacks = IdentityFallbacks(headers)
        fallbacks.app = policy.appIdentity.settings(for: appID)
    }

    /// The App ID a request acts for, authorized: `Apsio-App-Id` (else the policy's
    /// `defaultAppID`) must be well-formed, allowed, and, when the app has keys, the request must
    /// carry `Authorization: Bearer <key>` with one of them.
    ///
    /// The one check every endpoint that serves an app uses (intake, `/v1/policy`), so they
    /// answer alike. Answer a rejection with ``GatewayIntake/errorResponse(_:format:)``.
    ///
    /// - Throws: ``IntakeRejection`` 400 (malformed, or missing without a default), 403 (not in
    ///   `allowedAppIDs`) or 401 (`{"code":16,"message":"missing or invalid app key"}`, answered
    ///   with `WWW-Authenticate: Bearer`).
    static func authorizedAppID(_ headers: HTTPHeaders, policy: GatewayPolicy) throws(IntakeRejection) -> String {
        let appID: String
        if let value = headers[appIDHeader] {
            guard isValidIdentifier(value) else {
                throw IntakeRejection(.badRequest, "Apsio-App-Id must be 1-128 characters of A-Z a-z 0-9 . _ ~ : -")
            }
            appID = value
        } else if let fallback = policy.defaultAppID {
            appID = fallback
        } else {
            throw IntakeRejection(.badRequest, "missing Apsio-App-Id header (and no defaultAppId is configured)")
        }
        try authorize(app: appID, headers: headers, policy: policy)
        return appID
    }

    /// Authorizes a request for `app` when the App ID comes from elsewhere than `Apsio-App-Id`
    /// (a query parameter): 403 when the app is not allowed, 401 when it has keys and the
    /// request presents none of them.
    static func authorize(app: String, headers: HTTPHeaders, policy: GatewayPolicy) throws(IntakeRejection) {
        if let allowed = policy.allowedAppIDs, !allowed.contains(app) {
            throw IntakeRejection(.forbidden, "app \(app) is not allowed on this gateway")
        }
        if policy.appKeys.requiresKey(app: app) && !policy.appKeys.accepts(bearerToken(headers), app: app) {
            throw IntakeRejection(.unauthorized, "missing or invalid app key")
        }
    }

    /// The token of `Authorization: Bearer <token>` (scheme case-insensitive), or `nil`.
    static func bearerToken(_ headers: HTTPHeaders) -> String? {
        guard let value = headers["Authorization"] else { return nil }
        let trimmed = value.drop { $0 == " " || $0 == "\t" }
        guard trimmed.count > 7, trimmed.prefix(6).lowercased() == "bearer" else { return nil }
        let afterScheme = trimmed.dropFirst(6)
        guard afterScheme.first == " " || afterScheme.first == "\t" else { return nil }
        let token = afterScheme.drop { $0 == " " || $0 == "\t" }
        var end = token.endIndex
        while end > token.startIndex, token[token.index(before: end)] == " " || token[token.index(before: end)] == "\t"
        {
            end = token.index(before: end)
        }
        let result = token[..<end]
        return result.isEmpty ? nil : String(result)
    }

    /// Whether `value` is 1-128 characters of `[A-Za-z0-9._~:-]`.
    static func isValidIdentifier(_ value: String) -> Bool {
        let utf8 = value.utf8
        guard (1...128).contains(utf8.count) else { return false }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
                UInt8(ascii: ":"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }

    /// Parses epoch milliseconds (digits only) or an RFC 3339 date-time with a `Z` or `±HH:MM`
    /// offset and an optional fraction (kept to milliseconds), through ``RFC3339``.
    static func parseTimestamp(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return nil }
        if bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return bytes.count <= 15 ? Int64(text) : nil
        }
        return RFC3339.epochMilliseconds(text)
    }
}

/// Identity values from request headers, used when a resource lacks the attribute, and the app's
/// configured identity settings (``AppIdentityPolicy``), used after the headers.
struct IdentityFallbacks: Sendable, Equatable {
    /// The app's `appIdentity` settings: defaults after the headers, and derive or refuse.
    var app = AppIdentityPolicy.Settings()
    var deviceID: String?
    var installationID: String?
    var appVersion: String?
    var buildNumber: Int64?
    var sdkVersion: String?
    var platform: String?
    var packageName: String?
    var deviceType: String?

    init(
        deviceID: String? = nil, installationID: String? = nil, appVersion: String? = nil, buildNumber: Int64? = nil,
        sdkVersion: String? = nil, platform: String? = nil, packageName: String? = nil, deviceType: String? = nil,
        app: AppIdentityPolicy.Settings = AppIdentityPolicy.Settings()
    ) {
        self.app = app
        self.deviceID = deviceID
        self.installationID = installationID
        self.appVersion = appVersion
        self.buildNumber = buildNumber
        self.sdkVersion = sdkVersion
        self.platform = platform
        self.packageName = packageName
        self.deviceType = deviceType
    }

    init(_ headers: HTTPHeaders) {
        func value(_ name: String) -> String? {
            guard let text = headers[name], !text.isEmpty else { return nil }
            return text
        }
        self.init(
            deviceID: value("Apsio-Device-Id"), installationID: value("Apsio-Installation-Id"),
            appVersion: value("Apsio-App-Version"), buildNumber: value("Apsio-Build-Number").flatMap { Int64($0) },
            sdkVersion: value("Apsio-Sdk-Version"), platform: value("Apsio-Platform")?.lowercased(),
            packageName: value("Apsio-Package-Name"), deviceType: value("Apsio-Device-Type"))
    }
}

/// A request the intake refuses, with the status and a message for the client.
struct IntakeRejection: Error, Sendable {
    var status: HTTPStatus
    var message: String
    /// `Retry-After` seconds for 429 and 503.
    var retryAfterSeconds: Int?

    init(_ status: HTTPStatus, _ message: String, retryAfterSeconds: Int? = nil) {
        self.status = status
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }
}
