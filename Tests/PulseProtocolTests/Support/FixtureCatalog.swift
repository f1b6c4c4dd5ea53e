import MsgTrans
import PulseJSON
import PulseProtocol

/// The golden frames, built from ``Samples``. Only the generator uses this; the fixture tests read
/// the checked-in files.
enum FixtureCatalog {
    struct Item {
        var fixture: FrameFixture
        var plaintext: [UInt8]
        var preferred: Compression
    }

    static func item(
        _ name: String, _ description: String, _ bizType: PulseBizType, _ packetType: PacketType, id: UInt32,
        model: String, preferred: Compression = .none, _ payload: some PulseJSONCodable
    ) -> Item {
        let packet: String
        switch packetType {
        case .request: packet = "request"
        case .response: packet = "response"
        case .oneWay: packet = "oneWay"
        }
        let plaintext = payload.encodeJSON()
        let effective = preferred != .none && plaintext.count >= PulseLimits.compressionMinBytes ? preferred : .none
        let compression: String
        switch effective {
        case .none: compression = "none"
        case .zstd: compression = "zstd"
        case .zlib: compression = "zlib"
        }
        let fixture = FrameFixture(
            name: name, description: description, bizType: PulseBizType.registry[bizType]!.name, packetType: packet,
            messageID: id, compression: compression, model: model, frameFile: name + ".hex",
            plaintextFile: name + ".json")
        return Item(fixture: fixture, plaintext: plaintext, preferred: preferred)
    }

    static var items: [Item] {
        [
            item(
                "connect-request", "first frame: CLIENT_CONNECT request, uncompressed", .clientConnect, .request, id: 1,
                model: "ConnectRequest", Samples.connectRequest),
            item(
                "connect-response", "CLIENT_CONNECT success with connection id and revision", .clientConnect,
                .response, id: 1, model: "PulseEnvelope<ConnectResult>", PulseEnvelope.ok(Samples.connectResult)),
            item(
                "connect-response-403", "CLIENT_CONNECT rejected by package policy", .clientConnect, .response, id: 1,
                model: "PulseEnvelope<ConnectResult>",
                PulseEnvelope<ConnectResult>.failure(
                    .forbidden, "package com.example.other is not allowed for app_7f3a")),
            item(
                "heartbeat-request", "CLIENT_HEARTBEAT request", .clientHeartbeat, .request, id: 2,
                model: "HeartbeatRequest", Samples.heartbeatRequest),
            item(
                "heartbeat-response", "CLIENT_HEARTBEAT accepted", .clientHeartbeat, .response, id: 2,
                model: "PulseEnvelope<HeartbeatResult>", PulseEnvelope.ok(Samples.heartbeatResult)),
            item(
                "config-pull-request", "CLIENT_CONFIG_PULL from revision 11", .clientConfigPull, .request, id: 3,
                model: "ConfigPullRequest", preferred: .zstd, Samples.configPullRequest),
            item(
                "config-pull-response", "CLIENT_CONFIG_PULL complete snapshot, revision 12", .clientConfigPull,
                .response, id: 3, model: "PulseEnvelope<ConfigSnapshot>", preferred: .zstd,
                PulseEnvelope.ok(Samples.configSnapshot)),
            item(
                "config-pull-response-409", "CLIENT_CONFIG_PULL with a client revision newer than the server's",
                .clientConfigPull, .response, id: 3, model: "PulseEnvelope<ConfigSnapshot>",
                PulseEnvelope<ConfigSnapshot>.failure(.conflict, "client revision 13 is newer than server revision 12")),
            item(
                "crash-batch-request-zlib", "CLIENT_CRASH_BATCH_UPLOAD, two crashes, zlib", .clientCrashBatchUpload,
                .request, id: 4, model: "CrashBatch", preferred: .zlib, Samples.crashBatch),
            item(
                "crash-batch-response", "crash batch durably accepted", .clientCrashBatchUpload, .response, id: 4,
                model: "PulseEnvelope<Bool>", PulseEnvelope<Bool>.accepted),
            item(
                "crash-batch-response-501", "an upstream without crash upload", .clientCrashBatchUpload, .response,
                id: 4, model: "PulseEnvelope<Bool>",
                PulseEnvelope<Bool>.failure(
                    .notImplemented, "CLIENT_CRASH_BATCH_UPLOAD is not implemented by this peer")),
            item(
                "event-batch-request-zstd", "CLIENT_EVENT_BATCH_UPLOAD, 64 events, zstd level 3",
                .clientEventBatchUpload, .request, id: 5, model: "EventBatch", preferred: .zstd,
                Samples.eventBatch(count: 64, batchId: "b-0005-zstd")),
            item(
                "event-batch-response", "the 33-byte acknowledgement", .clientEventBatchUpload, .response, id: 5,
                model: "PulseEnvelope<Bool>", PulseEnvelope<Bool>.accepted),
            item(
                "event-batch-request-zlib", "CLIENT_EVENT_BATCH_UPLOAD, 16 events, zlib", .clientEventBatchUpload,
                .request, id: 6, model: "EventBatch", preferred: .zlib,
                Samples.eventBatch(count: 16, batchId: "b-0006-zlib")),
            item(
                "event-batch-response-429", "ingest queue full", .clientEventBatchUpload, .response, id: 6,
                model: "PulseEnvelope<Bool>", PulseEnvelope<Bool>.failure(.tooManyRequests, "ingest queue is full")),
            item(
                "event-batch-request-small", "CLIENT_EVENT_BATCH_UPLOAD under 1024 bytes stays uncompressed",
                .clientEventBatchUpload, .request, id: 7, model: "EventBatch", preferred: .zstd,
                EventBatch(identity: Samples.identity, events: [Samples.event(1)], batchId: "b-0007-small")),
            item(
                "event-batch-response-403", "batch identity differs from the connected identity",
                .clientEventBatchUpload, .response, id: 7, model: "PulseEnvelope<Bool>",
                PulseEnvelope<Bool>.failure(.forbidden, "batch identity does not match the connected identity")),
            item(
                "update-check-request", "CLIENT_APP_UPDATE_CHECK from build 241", .clientAppUpdateCheck, .request,
                id: 8, model: "UpdateCheckRequest", Samples.updateCheckRequest),
            item(
                "update-check-response", "optional update, with the beta root compatibility copy",
                .clientAppUpdateCheck, .response, id: 8, model: "UpdateCheckResponse",
                UpdateCheckResponse(envelope: .ok(Samples.updateCheckResult))),
            item(
                "control-rpc-request", "server-originated telemetry.flush (the server's own id counter)",
                .bidirectionalControlRPC, .request, id: 1, model: "ControlRPCRequest", Samples.controlRequest),
            item(
                "control-rpc-response", "telemetry.flush result from the client", .bidirectionalControlRPC,
                .response, id: 1, model: "PulseEnvelope<ControlRPCResult>",
                PulseEnvelope.ok(ControlRPCResult(Samples.controlResult))),
            item(
                "control-rpc-response-404", "a route the receiver does not allowlist", .bidirectionalControlRPC,
                .response, id: 2, model: "PulseEnvelope<ControlRPCResult>",
                PulseEnvelope<ControlRPCResult>.failure(.notFound, "unsupported control route config.reset_all")),
            item(
                "oneway-heartbeat", "protocol violation: an allocated type sent one-way", .clientHeartbeat, .oneWay,
                id: 1, model: "HeartbeatRequest", Samples.heartbeatRequest),
            item(
                "oneway-heartbeat-response-400", "PulseGate answers the one-way frame with 400 and its message id",
                .clientHeartbeat, .response, id: 1, model: "PulseEnvelope<Bool>",
                PulseEnvelope<Bool>.failure(.badRequest, "CLIENT_HEARTBEAT must be sent as a request, not one-way")),
        ]
    }

    /// The frame bytes of an item.
    static func frame(_ item: Item) throws -> [UInt8] {
        try Frame.make(
            packetType: item.fixture.msgTransPacketType!,
            bizType: PulseBizType.registry.entry(named: item.fixture.bizType)!.bizType.rawValue,
            messageID: item.fixture.messageID, plaintext: item.plaintext, preferred: item.preferred
        ).encoded()
    }
}
