import PulseHTTP
import PulseProtocol

/// `GET /v1/policy` and the `Apsio-Policy-Revision` upload header (described in `docs/policy.md`
/// and `openapi/pulsegate.yaml`).
///
/// | condition | answer |
/// | --- | --- |
/// | method other than GET | 405, `Allow: GET` |
/// | malformed `Apsio-App-Id`, or missing without `defaultAppId` | 400 |
/// | App ID not in `allowedAppIds` | 403 |
/// | the app has `appKeys` and no valid `Authorization: Bearer` key is presented | 401, `WWW-Authenticate: Bearer` |
/// | `If-None-Match` is the current ETag (or `*`) | 304, no body |
/// | snapshot cached (or pulled now) | 200, the snapshot's canonical JSON |
/// | the upstream defines no policy for the app, or the app had no traffic and is not configured (the upstream is not asked) | 404 `{"code":5,…}` |
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
        guard request.method == .get else { return GatewayIntake.onlyGetAllowed(request) }
        let gatewayPolicy = policy()
        let app: String
        do {
            app = try IntakeHeaders.authorizedAppID(request.headers, policy: gatewayPolicy)
        } catch {
            return GatewayIntake.errorResponse(error)
        }
        let configured =
            gatewayPolicy.defaultAppID == app || gatewayPolicy.allowedAppIDs?.contains(app) == true
            || gatewayPolicy.appKeys.requiresKey(app: app)
        switch await cache.lookup(app: app, configured: configured) {
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

    /// The `Apsio-Policy-Revision` an upload response to `request` carries, read when the request
    /// arrives: the cached revision of its app (0 when none is known), or `nil` when the App ID is not
    /// known (invalid, not allowed or, when the app has keys, not authorized). Read before the commit,
    /// so the answer states the revision the request was admitted under, not whatever a pull that the
    /// commit's own forwarding set off has cached by the time the answer is written.
    func revision(for request: HTTPRequest) -> String? {
        guard let app = try? IntakeHeaders.authorizedAppID(request.headers, policy: policy()) else { return nil }
        return String(cache.revision(app: app))
    }

    /// Sets `Apsio-Policy-Revision` to `revision` (from ``revision(for:)``) when there is one.
    func stamp(_ response: inout HTTPResponse, revision: String?) {
        if let revision { response.headers.set(name: Self.revisionHeader, value: revision) }
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
