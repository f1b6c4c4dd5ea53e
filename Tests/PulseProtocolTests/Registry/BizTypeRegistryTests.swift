import PulseProtocol
import Testing

@Suite struct BizTypeRegistryTests {
    // The canonical table of the contract, written out literally: this is the one place numbers appear.
    static let contractTable: [(UInt8, String, PulseBizDirection)] = [
        (1, "CLIENT_CONNECT", .clientToServer),
        (2, "CLIENT_HEARTBEAT", .clientToServer),
        (3, "CLIENT_CONFIG_PULL", .clientToServer),
        (4, "CLIENT_CRASH_BATCH_UPLOAD", .clientToServer),
        (5, "CLIENT_EVENT_BATCH_UPLOAD", .clientToServer),
        (6, "CLIENT_APP_UPDATE_CHECK", .clientToServer),
        (7, "BIDIRECTIONAL_CONTROL_RPC", .bidirectional),
    ]

    @Test func registryMatchesTheContractTableExactly() {
        let registry = PulseBizType.registry
        #expect(registry.entries.count == 7)
        for (raw, name, direction) in Self.contractTable {
            let entry = registry[raw]
            #expect(entry?.name == name)
            #expect(entry?.direction == direction)
            #expect(entry?.bizType.rawValue == raw)
        }
        let allocated = (0...255).filter { PulseBizType(rawValue: UInt8($0)).isAllocated }
        #expect(allocated == [1, 2, 3, 4, 5, 6, 7])
    }

    @Test func namedConstantsHaveContractValues() {
        let constants: [PulseBizType] = [
            .clientConnect, .clientHeartbeat, .clientConfigPull, .clientCrashBatchUpload, .clientEventBatchUpload,
            .clientAppUpdateCheck, .bidirectionalControlRPC,
        ]
        #expect(constants.map(\.rawValue) == Self.contractTable.map(\.0))
        #expect(PulseBizType.reserved.rawValue == 0)
        #expect(!PulseBizType.reserved.isAllocated)
        #expect(PulseBizType.registry[.reserved] == nil)
    }

    @Test func lookupByNameAndDescription() {
        #expect(PulseBizType.registry.entry(named: "CLIENT_EVENT_BATCH_UPLOAD")?.bizType == .clientEventBatchUpload)
        #expect(PulseBizType.registry.entry(named: "client_connect") == nil)
        #expect(PulseBizType.clientAppUpdateCheck.description == "CLIENT_APP_UPDATE_CHECK")
        #expect(PulseBizType.reserved.description == "RESERVED(0)")
        #expect(PulseBizType(rawValue: 200).description == "UNALLOCATED(200)")
    }

    @Test func directionsAllowTheRightOriginators() {
        #expect(PulseBizDirection.clientToServer.allowsRequest(from: .client))
        #expect(!PulseBizDirection.clientToServer.allowsRequest(from: .server))
        #expect(PulseBizDirection.bidirectional.allowsRequest(from: .client))
        #expect(PulseBizDirection.bidirectional.allowsRequest(from: .server))
    }
}
