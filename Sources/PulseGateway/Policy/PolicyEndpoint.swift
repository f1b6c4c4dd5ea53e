import PulseHTTP
import PulseProtocol

/// `GET /v1/policy` and the `Apsio-Policy-Revision` upload header (contract in
/// `CONTRACTS-S2.md`, described in `docs/policy.md`).
///
/// | condition | answer |
/// | --- | --- |
/// | method other than GET | 405, `Allow: GET` |
/// | malformed `Apsio-App-Id`, or missing without `defaultAppId` | 400 |
/// | App ID not in `allowedAppIds` | 403 |
/// | `If-None-Match` is the current ETag (or `*`) | 304, no body |
/// | snapshot cached (or pulled now) | 200, the snapshot's canonical JSON |
/// | the upstream defines no policy for the app | 404 `{"code":5,…}` |
/// | nothing cached and the upstream cannot be asked | 503, `Retry-After` `{"code":14,…}` |
///
/// 200 and 304 carry `ETag: "<revision>"`, `Apsio-Policy-Revision: <revision>` and
/// `Cache-Control: no-cache`.
struct PolicyEndpoint: Sendable {
    let cache: PolicyCache
    let policy: @Sendable () -> GatewayPolicy

    static let path = "/v1/policy"
    static let revisionHeader = "Apsio-Policy-Revision"

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        guard request.method == .get else {
            var response = GatewayIntake.errorResponse(
                IntakeRejection(.methodNotAllowed, "\(request.method) is not allowed on \(Self.path); use GET"))
            response.headers.set(name: "Allow", value: "GET")
            return response
        }
        let gatewayPolicy = policy()
        let app: String
        do {
            app = try Self.appID(request.headers, policy: gatewayPolicy)
        } catch {
            return GatewayIntake.errorResponse(error)
        }
        switch await cache.lookup(app: app) {
        case .snapshot(let snapshot):
            let tag = "\"\(snapshot.revision)\""
            var headers: HTTPHeaders = [
                "ETag": tag, Self.revisionHeader: String(snapshot.revision), "Cache-Control": "no-cache",
            ]
            if let condition = request.headers["If-None-Match"], Self.matches(condition, tag: tag) {
                return HTTPResponse(status: HTTPStatus(code: 304), headers: headers, body: [])
            }
            headers.set(name: "Content-Type", value: "application/json")
            return HTTPResponse(status: .ok, headers: headers, body: snapshot.encodeJSON())
        case .noPolicy:
            return GatewayIntake.errorResponse(IntakeRejection(.notFound, "no policy for app \(app)"))
        case .unavailable:
            return GatewayIntake.errorResponse(
                IntakeRejection(
                    .serviceUnavailable, "no policy for app \(app) is cached yet and the upstream cannot be asked now",
                    retryAfterSeconds: gatewayPolicy.retryAfterSeconds))
        }
    }

    /// The App ID of a request, validated exactly like the intake: `Apsio-App-Id` or the default
    /// (400 when malformed or missing), then `allowedAppIds` (403).
    static func appID(_ headers: HTTPHeaders, policy: GatewayPolicy) throws(IntakeRejection) -> String {
        let app: String
        if let value = headers[IntakeHeaders.appIDHeader] {
            guard IntakeHeaders.isValidIdentifier(value) else {
                throw IntakeRejection(.badRequest, "Apsio-App-Id must be 1-128 characters of A-Z a-z 0-9 . _ ~ : -")
            }
            app = value
        } else if let fallback = policy.defaultAppID {
            app = fallback
        } else {
            throw IntakeRejection(.badRequest, "missing Apsio-App-Id header (and no defaultAppId is configured)")
        }
        if let allowed = policy.allowedAppIDs, !allowed.contains(app) {
            throw IntakeRejection(.forbidden, "app \(app) is not allowed on this gateway")
        }
        return app
    }

    /// Whether an `If-None-Match` value names `tag`: `*`, or a comma-separated list containing it
    /// (weak `W/` tags compare equal, as RFC 9110 requires for If-None-Match).
    static func matches(_ condition: String, tag: String) -> Bool {
        for part in condition.split(separator: ",") {
            var candidate = part.trimmingCharacters(in: " \t")
            if candidate == "*" { return true }
            if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
            if candidate == tag { return true }
        }
        return false
    }

    /// Sets `Apsio-Policy-Revision` on an upload response when the request's App ID is known (valid
    /// and allowed): the cached revision of that app, 0 when none is known.
    func stamp(_ response: inout HTTPResponse, request: HTTPRequest) {
        guard let app = try? Self.appID(request.headers, policy: policy()) else { return }
        response.headers.set(name: Self.revisionHeader, value: String(cache.revision(app: app)))
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = self
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}
