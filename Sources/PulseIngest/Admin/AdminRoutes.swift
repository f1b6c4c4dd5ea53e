import MsgTransRuntime
import PulseHTTP
import PulseJSON
import PulseKit
import PulseProtocol

/// The admin HTTP endpoint's routes (JSON responses):
///
/// - `GET /stats`: ``IngestStatistics`` as JSON.
/// - `GET /metrics`: the same numbers in the Prometheus text format (``AdminMetrics``).
/// - `GET /events?app=APP&limit=N`: the newest N (default 50, at most 1,000) events of APP.
/// - `GET /crashes?app=APP&limit=N`: the newest N crash reports of APP.
/// - `GET /connections?app=APP`: APP's durable connection history.
/// - `POST /control` with `{"app":"…","route":"telemetry.flush","args":{}}`: sends the control RPC
///   to every connected client of the app and answers with each client's response.
/// - `POST /reload`: re-reads the config file (as SIGHUP does), bumps revisions, sends
///   `config.invalidate` to the clients of changed apps; answers `{"reloaded":true,"changedApps":[…]}`.
struct AdminRoutes: Sendable {
    static let defaultLimit = 50
    static let maximumLimit = 1_000

    let core: IngestCore
    let transport: MsgTransStatistics
    let controlTimeout: Duration
    let reloader: AdminReloader
    /// The build's version, for `pulsegate_build_info`.
    var version = "unknown"

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        switch (request.method, request.path) {
        case (.get, "/stats"), (.head, "/stats"):
            return json(.ok, Self.encode(core.statistics(transport: transport)))
        case (.get, "/metrics"), (.head, "/metrics"):
            return HTTPResponse(
                status: .ok, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
                body: Array(AdminMetrics.render(core.statistics(transport: transport), version: version).utf8))
        case (.get, "/events"):
            return await listing(request) { app, limit in
                let events = try await core.store.events(app: app, limit: limit)
                return Self.encode(app: app, events: events)
            }
        case (.get, "/crashes"):
            return await listing(request) { app, limit in
                let crashes = try await core.store.crashes(app: app, limit: limit)
                return Self.encode(app: app, crashes: crashes)
            }
        case (.get, "/connections"):
            return await listing(request) { app, _ in
                let history = try await core.store.connectionHistory(app: app)
                return Self.encode(app: app, history: history)
            }
        case (.post, "/control"):
            return await control(request)
        case (.post, "/reload"):
            return await reload()
        case (_, "/stats"), (_, "/metrics"), (_, "/events"), (_, "/crashes"), (_, "/connections"), (_, "/control"),
            (_, "/reload"):
            return error(.methodNotAllowed, "method \(request.method) is not allowed on \(request.path)")
        default:
            return error(
                .notFound, "no such endpoint; try /stats, /metrics, /events?app=…, /crashes?app=…, /connections?app=…")
        }
    }

    private func listing(
        _ request: HTTPRequest, _ body: @Sendable (String, Int) async throws -> [UInt8]
    ) async -> HTTPResponse {
        guard let app = request.queryValue("app"), !app.isEmpty else {
            return error(.badRequest, "the app query parameter is required")
        }
        var limit = Self.defaultLimit
        if let text = request.queryValue("limit") {
            guard let value = Int(text), value > 0 else {
                return error(.badRequest, "limit must be a positive integer")
            }
            limit = min(value, Self.maximumLimit)
        }
        do {
            return json(.ok, try await body(app, limit))
        } catch {
            return self.error(.serviceUnavailable, "storage unavailable")
        }
    }

    private func control(_ request: HTTPRequest) async -> HTTPResponse {
        guard let body = try? JSONValue.parse(request.body), case .object = body else {
            return error(.badRequest, "the body must be a JSON object {\"app\":…,\"route\":…,\"args\":{…}}")
        }
        guard case .string(let app)? = body["app"], !app.isEmpty else {
            return error(.badRequest, "app is required")
        }
        guard case .string(let name)? = body["route"], let route = ControlRoute(name) else {
            return error(.badRequest, "route must be a lower-case dotted name such as telemetry.flush")
        }
        let arguments = body["args"] ?? .object([])
        guard case .object = arguments else {
            return error(.badRequest, "args must be an object")
        }
        let outcomes = await core.sendControl(app: app, route: route, arguments: arguments, timeout: controlTimeout)
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("app", app)
        writer.field("route", route.name)
        writer.field("sent", outcomes.count)
        writer.objects("outcomes", outcomes) { writer, outcome in
            writer.field("connectionId", outcome.connectionId)
            writer.field("code", outcome.code)
            writer.field("msg", outcome.message)
            writer.field("data", outcome.data)
            writer.field("failure", outcome.failure)
        }
        writer.endObject()
        return json(.ok, writer.bytes)
    }

    private func reload() async -> HTTPResponse {
        let changed: [String]?
        do {
            changed = try await reloader.reload()
        } catch {
            return self.error(.badRequest, "reload failed, the previous config stays: \(error.message)")
        }
        guard let changed else {
            return error(.serviceUnavailable, "the server is shutting down")
        }
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("reloaded", true)
        writer.strings("changedApps", changed)
        writer.endObject()
        return json(.ok, writer.bytes)
    }

    // MARK: - Encoding

    private func json(_ status: HTTPStatus, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }

    private func error(_ status: HTTPStatus, _ message: String) -> HTTPResponse {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("error", message)
        writer.endObject()
        return json(status, writer.bytes)
    }

    static func encode(_ statistics: IngestStatistics) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("openConnections", statistics.openConnections)
        writer.field("pendingBatches", statistics.pendingBatches)
        writer.field("pendingBatchCapacity", statistics.pendingBatchCapacity)
        writer.field("commits", statistics.commits)
        writer.field("committedJobs", statistics.committedJobs)
        writer.field("groupCommits", statistics.groupCommits)
        writer.field("largestGroupCommit", statistics.largestGroupCommit)
        writer.field("decompressionContextsCreated", statistics.decompressionContextsCreated)
        writer.field("decompressionContextsReused", statistics.decompressionContextsReused)
        writer.field("logLinesDropped", statistics.logLinesDropped)
        writer.object("rejections") { writer in
            for (code, count) in statistics.rejections.sorted(by: { $0.key < $1.key }) {
                writer.field(String(code), count)
            }
        }
        let apps = statistics.apps.sorted(by: { $0.key < $1.key })
        func app(_ entry: (key: String, value: IngestAppStatistics)) -> String { entry.key }
        writer.objects("apps", apps, named: app) { writer, entry in
            let stats = entry.value
            writer.field("sessions", stats.sessions)
            writer.field("present", stats.present)
            writer.field("eventBatches", stats.eventBatches)
            writer.field("crashBatches", stats.crashBatches)
            writer.field("duplicateBatches", stats.duplicateBatches)
            writer.field("events", stats.events)
            writer.field("duplicateEvents", stats.duplicateEvents)
            writer.field("crashes", stats.crashes)
            writer.field("duplicateCrashes", stats.duplicateCrashes)
        }
        writer.endObject()
        return writer.bytes
    }

    static func encode(app: String, events: [IngestedEvent]) -> [UInt8] {
        encodeList(app: app, key: "events", items: events, bytesPerItem: 256) { writer, event in
            writer.field("eventId", event.eventId)
            writer.field("batchId", event.batchId)
            writer.field("installationId", event.installationId)
            writer.field("deviceId", event.deviceId)
            writer.field("receivedAtMs", event.receivedAtMs)
            writer.key("event")
            writer.value(canonical(event.json, as: PulseEvent.self))
        }
    }

    static func encode(app: String, crashes: [IngestedCrash]) -> [UInt8] {
        encodeList(app: app, key: "crashes", items: crashes, bytesPerItem: 512) { writer, crash in
            writer.field("crashId", crash.crashId)
            writer.field("batchId", crash.batchId)
            writer.field("installationId", crash.installationId)
            writer.field("receivedAtMs", crash.receivedAtMs)
            writer.key("crash")
            writer.value(canonical(crash.json, as: CrashReport.self))
        }
    }

    /// A stored item as the listings show it: its canonical encoding, as the store kept it until it
    /// began storing the bytes as received, so the listing reads the same for every row, old or new
    /// (`nil` → `null` only for a row that no longer decodes).
    private static func canonical<Item: PulseJSONCodable>(_ json: String, as type: Item.Type) -> JSONValue {
        let stored = Array(json.utf8)
        let bytes = (try? Item(decodingJSON: stored).encodeJSON()) ?? stored
        return (try? JSONValue.parse(bytes)) ?? .null
    }

    static func encode(app: String, history: [ConnectionHistoryEntry]) -> [UInt8] {
        encodeList(app: app, key: "connections", items: history, bytesPerItem: 256) { writer, entry in
            writer.field("connectionId", entry.connectionId)
            writer.field("packageName", entry.packageName)
            writer.field("deviceId", entry.deviceId)
            writer.field("installationId", entry.installationId)
            writer.field("platform", entry.platform)
            writer.field("sdkVersion", entry.sdkVersion)
            writer.field("remoteAddress", entry.remoteAddress)
            writer.field("connectedAtMs", entry.connectedAtMs)
            writer.field("lastHeartbeatAtMs", entry.lastHeartbeatAtMs)
            writer.field("heartbeatCount", entry.heartbeatCount)
            writer.field("closedAtMs", entry.closedAtMs)
        }
    }

    /// `{"app":…,"<key>":[{…},…]}`: the envelope every per-app listing of the admin endpoint uses;
    /// `member` writes one item's fields inside its object.
    private static func encodeList<Item>(
        app: String, key: String, items: [Item], bytesPerItem: Int, member: (inout JSONWriter, Item) -> Void
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: bytesPerItem * max(1, items.count))
        writer.beginObject()
        writer.field("app", app)
        writer.objects(key, items, member)
        writer.endObject()
        return writer.bytes
    }
}
