import PulseProtocol
import Testing

@Suite struct PeerProfileTests {
    /// The contract's baseline server: CONNECT, HEARTBEAT, EVENT_BATCH_UPLOAD, APP_UPDATE_CHECK.
    let server = PulsePeerProfile(
        role: .server,
        implemented: [.clientConnect, .clientHeartbeat, .clientEventBatchUpload, .clientAppUpdateCheck])
    /// A client that answers control RPCs.
    let client = PulsePeerProfile(role: .client, implemented: [.bidirectionalControlRPC])

    @Test func firstFrameMustBeAConnectRequest() {
        #expect(serverDecision(.clientConnect, .awaitingFirstFrame) == .dispatch(.clientConnect))
        for bizType in [PulseBizType.clientHeartbeat, .clientEventBatchUpload, .reserved, PulseBizType(rawValue: 99)] {
            guard case .close = serverDecision(bizType, .awaitingFirstFrame) else {
                Issue.record("\(bizType) as first frame must close")
                continue
            }
        }
        guard
            case .close = server.decide(
                bizType: PulseBizType.clientConnect.rawValue, oneWay: true, phase: .awaitingFirstFrame)
        else {
            Issue.record("a one-way CLIENT_CONNECT as first frame must close")
            return
        }
    }

    @Test func beforeConnectSucceedsOtherOperationsGet401() {
        #expect(serverDecision(.clientConnect, .awaitingConnect) == .dispatch(.clientConnect))
        #expect(code(serverDecision(.clientHeartbeat, .awaitingConnect)) == .unauthorized)
    }

    @Test func afterConnectUnknownIs404AndUnimplementedIs501() {
        let rejections: [(PulseBizType, PulseResponseCode)] = [
            (PulseBizType(rawValue: 42), .notFound), (.clientConfigPull, .notImplemented),
            (.clientCrashBatchUpload, .notImplemented), (.bidirectionalControlRPC, .notImplemented),
            (.reserved, .badRequest), (.clientConnect, .conflict),
        ]
        for (bizType, expected) in rejections {
            #expect(code(serverDecision(bizType, .connected)) == expected, "\(bizType)")
        }
        #expect(serverDecision(.clientEventBatchUpload, .connected) == .dispatch(.clientEventBatchUpload))
    }

    @Test func oneWayWithAnAllocatedTypeIs400() {
        for entry in PulseBizType.registry.entries {
            #expect(
                code(server.decide(bizType: entry.bizType.rawValue, oneWay: true, phase: .connected)) == .badRequest)
        }
        #expect(code(server.decide(bizType: 77, oneWay: true, phase: .connected)) == .notFound)
    }

    @Test func directionIsEnforced() {
        // A server may not send CLIENT_* requests to a client.
        #expect(
            code(client.decide(bizType: PulseBizType.clientHeartbeat.rawValue, oneWay: false, phase: .connected))
                == .badRequest)
        #expect(
            client.decide(bizType: PulseBizType.bidirectionalControlRPC.rawValue, oneWay: false, phase: .connected)
                == .dispatch(.bidirectionalControlRPC))
        #expect(client.implements(.bidirectionalControlRPC))
        #expect(!client.implements(.clientConnect))
    }

    /// The server's decision on a request (not a one-way message) of `bizType` in `phase`.
    private func serverDecision(_ bizType: PulseBizType, _ phase: PulseSessionPhase) -> PulseInboundDecision {
        server.decide(bizType: bizType.rawValue, oneWay: false, phase: phase)
    }

    private func code(_ decision: PulseInboundDecision) -> PulseResponseCode? {
        if case .reject(let code, _) = decision {
            return code
        }
        return nil
    }
}
