import PulseJSON
import PulseProtocol

/// Realistic sample payloads shared by the tests and the fixture generator.
enum Samples {
    static let identity = BatchIdentity(
        projectId: "app_7f3a", installationId: "inst-5b1c9e", deviceId: "dev-0a4471", userId: nil,
        appVersion: "2.4.1", buildNumber: 241, sdkVersion: "2.3.0", platform: "ios",
        packageName: "com.example.shop")

    static let connectRequest = ConnectRequest(
        appId: "app_7f3a", deviceId: "dev-0a4471", installationId: "inst-5b1c9e", platform: "ios",
        deviceType: "phone", packageName: "com.example.shop", appVersion: "2.4.1", buildNumber: 241,
        sdkVersion: "2.3.0", capabilities: ["batch_upload", "compression:zstd", "bidirectional_request"])

    static let connectResult = ConnectResult(
        connectionId: "conn-3d9f2a", serverTimeMs: 1_764_400_000_000, configRevision: 12,
        heartbeatIntervalMs: 60_000, collectKinds: [])

    static let heartbeatRequest = HeartbeatRequest(
        connectionId: "conn-3d9f2a", clientTimeMs: 1_764_400_060_125, sdkVersion: "2.3.0")

    static let heartbeatResult = HeartbeatResult(
        serverTimeMs: 1_764_400_060_131, configRevision: 12, heartbeatIntervalMs: 60_000,
        collectKinds: [.analytics, .crash, .error, .network])

    static let configPullRequest = ConfigPullRequest(
        configRevision: 11, capabilities: ["batch_upload", "compression:zstd", "bidirectional_request"])

    static let configSnapshot = ConfigSnapshot(
        revision: 12, killSwitch: false, maxBatchAgeMs: 604_800_000, queueByteCap: 8_388_608, sealIntervalMs: 15_000,
        batchMaxEvents: 64, batchMaxBytes: 65_536, compression: .zstd, compressionMinBytes: 1_024,
        sampling: [.analytics: 0.5, .log: 0.25, .breadcrumb: 0.125], diagnosticsLevel: .batchSummaries,
        collectKinds: [], requiredCapabilities: ["batch_upload"],
        endpoints: [ConfigEndpoint(name: "ingest", url: "tcp://127.0.0.1:6000")])

    static let updateCheckRequest = UpdateCheckRequest(
        platform: "ios", appKey: "app_7f3a", packageName: "com.example.shop", buildNumber: 241)

    static let updateCheckResult = UpdateCheckResult(
        action: .optional, latestVersionName: "2.5.0", latestBuildNumber: 250,
        releaseNotes: "Faster checkout.\nNew wishlist.", downloadUrl: "https://apps.example.com/shop/ios")

    static let controlRequest = ControlRPCRequest(route: .telemetryFlush, args: [], schemaVersion: 1)

    static let controlResult: JSONValue = .object([
        JSONMember(key: "flushedBatches", value: .int(3)), JSONMember(key: "queuedBytes", value: .int(0)),
    ])

    /// A deterministic event; `index` varies ids, names and attributes.
    static func event(_ index: Int, kind: PulseEventKind? = nil) -> PulseEvent {
        let kinds = PulseEventKind.allCases
        let chosen = kind ?? kinds[index % kinds.count]
        let hex = String(index, radix: 16)
        let id = String(repeating: "0", count: 32 - hex.count) + hex
        return PulseEvent(
            id: id, timestamp: 1_764_400_000_000 + Int64(index) * 250, sessionId: "sess-91c2e07b",
            kind: chosen, name: "event_\(chosen.rawValue.lowercased())_\(index % 5)",
            source: index % 3 == 0
                ? EventSource(module: "ShopKit", imageUuid: "5C2F8E1A-0B7D-4E2B-9F4A-3E1D2C0B9A87") : .unknown,
            attributes: [
                JSONMember(key: "screen", value: .string("checkout/step-\(index % 4)")),
                JSONMember(key: "durationMs", value: .int(Int64(120 + index))),
                JSONMember(key: "ratio", value: .double(0.05 + Double(index % 7) * 0.125)),
                JSONMember(key: "cached", value: .bool(index % 2 == 0)),
                JSONMember(key: "note", value: index % 5 == 0 ? .null : .string("caf\u{e9} \u{2192} \"ok\"")),
                JSONMember(
                    key: "tags",
                    value: .array([
                        .string("a\(index % 3)"), .string("b"), .object([JSONMember(key: "n", value: .int(1))]),
                    ])),
            ])
    }

    /// A batch of `count` events.
    static func eventBatch(count: Int, batchId: String = "b-0001-7c1e") -> EventBatch {
        EventBatch(identity: identity, events: (0..<count).map { event($0) }, batchId: batchId)
    }

    static func frame(_ number: Int) -> CrashFrame {
        let inApp = number < 4
        let address: Int = 0x1_0234_5000 + number * 0x40
        let offset: Int64 = 0x5000 + Int64(number) * 0x40
        return CrashFrame(
            module: inApp ? "ShopKit" : "libsystem_kernel.dylib",
            imageUuid: inApp ? "5C2F8E1A-0B7D-4E2B-9F4A-3E1D2C0B9A87" : "A1B2C3D4-E5F6-4789-8ABC-DEF012345678",
            address: "0x" + String(address, radix: 16), imageOffset: offset,
            symbol: number == 0 ? "CartView.render()" : nil, file: number == 0 ? "CartView.swift" : nil,
            line: number == 0 ? 118 : nil)
    }

    static func crash(_ index: Int) -> CrashReport {
        let stack: CrashStack =
            index % 2 == 0
            ? .frames((0..<12).map(frame))
            : .text("Thread 0 Crashed:\n0 ShopKit 0x0000000102345000 CartView.render() + 64\n1 UIKitCore 0x1")
        let build = CrashBuild(
            appVersion: "2.4.0", buildNumber: 240,
            imageUuids: ["5C2F8E1A-0B7D-4E2B-9F4A-3E1D2C0B9A87", "A1B2C3D4-E5F6-4789-8ABC-DEF012345678"],
            osVersion: "18.1", architecture: "arm64")
        let attachment = CrashAttachment(
            name: "minidump.dmp", contentType: "application/x-minidump", byteCount: 48_213,
            sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
        let timestamp: Int64 = 1_764_399_990_000 + Int64(index)
        return CrashReport(
            crashId: "crash-\(index)-d41f0c", timestamp: timestamp, sessionId: "sess-91c2e07b", signal: "SIGSEGV",
            exceptionType: index % 2 == 0 ? nil : "EXC_BAD_ACCESS",
            message: "Attempted to dereference garbage pointer 0x10.", stack: stack, build: build,
            attachments: [attachment],
            attributes: [
                JSONMember(key: "thread", value: .string("main")),
                JSONMember(key: "foreground", value: .bool(true)),
            ])
    }

    static let crashBatch = CrashBatch(identity: identity, crashes: [crash(0), crash(1)], batchId: "cb-0001-77aa")
}
