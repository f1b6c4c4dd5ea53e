/// Everything an ``Uploader`` needs to open its queue and send.

public import PulseKit

public struct UploaderConfiguration: Sendable {
    /// Called when the gateway answers 401 or 403: the queue is held and the app should fetch a fresh policy
    /// and apply it with ``Uploader/apply(policy:)``, which releases the hold. The argument is the status.
    public typealias PolicyRefreshHook = @Sendable (_ status: Int) async -> Void

    /// The gateway's base URL, e.g. `http://127.0.0.1:4318`; `/v1/logs`, `/v1/traces` and `/v1/metrics` are
    /// appended.
    public var endpoint: String
    /// The App ID, sent as `Apsio-App-Id` on every request.
    public var appId: String
    /// The folder holding the queue (`queue.sqlite`), the drain lock and the drain log; created if missing.
    public var dataDirectory: String
    /// Overrides the stored `device.id` (otherwise generated once and kept in the queue).
    public var deviceId: String?
    /// Overrides the stored `app.installation.id` (otherwise generated once and kept in the queue).
    public var installationId: String?
    /// `service.version`.
    public var appVersion: String?
    /// `apsio.app.build_number`.
    public var buildNumber: Int64?
    /// `apsio.app.package_name`.
    public var packageName: String?
    /// `user.id`.
    public var userId: String?
    /// Further resource attributes.
    public var resourceAttributes: [String: AttributeValue] = [:]
    /// Limits and intervals.
    public var policy = UploadPolicy()
    /// The fields of ``policy`` set explicitly for this process (for `pulsegate upload`, its command-line
    /// flags): a remote policy never replaces them. See ``PolicySource`` for the whole precedence.
    public var explicitPolicy: Set<UploadPolicy.Field> = []
    /// The clock every decision reads.
    public var clock: UploaderClock = .system
    /// The source of ids and jitter.
    public var random: RandomSource = .system
    /// The HTTP transport; `nil` uses a ``CurlTransport`` with ``UploadPolicy/maximumInFlight`` connections.
    public var transport: (any UploadTransport)?
    /// The background hand-over; `nil` keeps everything in the foreground session.
    public var backgroundTransfer: (any BackgroundTransfer)?
    /// A transfer the operating system (or an independent program) performs from exported batches; when
    /// set, crash reports, attachments and large batches take it whenever they are due, and moving to the
    /// background hands every due batch to it (before ``backgroundTransfer``, which then finds them leased).
    public var outOfProcessTransfer: (any OutOfProcessTransfer)?
    /// Network and power conditions; `nil` never defers.
    public var conditions: (any ConditionsProvider)?
    /// See ``PolicyRefreshHook``.
    public var policyRefresh: PolicyRefreshHook?
    /// The capabilities this uploader declares against a policy's `requiredCapabilities` (default: every
    /// capability this build has: `batch_upload`, `crash_upload`, `compression:gzip`, `compression:zstd`,
    /// `kill_switch`, `sampling`, `collect_kinds`, `diagnostics_levels`). A snapshot requiring another is
    /// refused.
    public var capabilities: Set<String> = Uploader.supportedCapabilities
    /// How often the foreground loop (``Uploader/run()``) fetches the policy from the gateway, starting at once;
    /// `nil` (the default) fetches only when an upload response announces a newer `Apsio-Policy-Revision` or
    /// the gateway answers 401/403. `pulsegate upload run` uses 10 minutes.
    public var policyRefreshIntervalMilliseconds: Int64?

    /// Creates a configuration with defaults for everything else.
    public init(endpoint: String, appId: String, dataDirectory: String) {
        self.endpoint = endpoint
        self.appId = appId
        self.dataDirectory = dataDirectory
    }

    /// The endpoint without a trailing slash, validated.
    func normalizedEndpoint() throws(UploaderError) -> String {
        var endpoint = endpoint
        while endpoint.hasSuffix("/") {
            endpoint.removeLast()
        }
        let lowered = endpoint.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), endpoint.count > 8,
            !endpoint.contains(where: { $0 == " " || $0 == "\n" || $0 == "\r" })
        else {
            throw UploaderError(.configuration, "the endpoint must be an http:// or https:// URL")
        }
        return endpoint
    }
}
