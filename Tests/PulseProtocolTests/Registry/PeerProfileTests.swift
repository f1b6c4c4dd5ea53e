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
        #expect(
            server.decide(bizType: PulseBizType.clientConnect.rawValue, oneWay: false, phase: .awaitingFirstFrame)
                == .dispatch(.clientConnect))
        for bizType in [PulseBizType.clientHeartbeat, .clientEventBatchUpload, .reserved, PulseBizType(rawValue: 99)] {
            guard case .close = server.decide(bizType: bizType.rawValue, oneWay: false, phase: .awaitingFirstFrame)
            else {
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
        #expect(
            server.decide(bizType: PulseBizType.clientConnect.rawValue, oneWay: false, phase: .awaitingConnect)
                == .dispatch(.clientConnect))
        #expect(
            code(server.decide(bizType: PulseBizType.clientHeartbeat.rawValue, oneWay: false, phase: .awaitingConnect))
                == .unauthorized)
    }

    @Test func afterConnectUnknownIs404AndUnimplementedIs501() {
        #expect(code(server.decide(bizType: 42, oneWay: false, phase: .connected)) == .notFound)
        #expect(
            code(server.decide(bizType: PulseBizType.clientConfigPull.rawValue, oneWay: false, phase: .connected))
                == .notImplemented)
        #expect(
            code(server.decide(bizType: PulseBizType.clientCrashBatchUpload.rawValue, oneWay: false, phase: .connected))
                == .notImplemented)
        #expect(
            code(
                server.decide(bizType: PulseBizType.bidirectionalControlRPC.rawValue, oneWay: false, phase: .connected))
                == .notImplemented)
        #expect(
            server.decide(bizType: PulseBizType.clientEventBatchUpload.rawValue, oneWay: false, phase: .connected)
                == .dispatch(.clientEventBatchUpload))
        #expect(
            code(server.decide(bizType: PulseBizType.reserved.rawValue, oneWay: false, phase: .connected))
                == .badRequest)
        #expect(
            code(server.decide(bizType: PulseBizType.clientConnect.rawValue, oneWay: false, phase: .connected))
                == .conflict)
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

    private func code(_ decision: PulseInboundDecision) -> PulseResponseCode? {
        if case .reject(let code, _) = decision {
            return code
        }
        return nil
    }
}
