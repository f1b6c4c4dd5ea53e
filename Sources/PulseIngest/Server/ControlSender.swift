import MsgTrans
import MsgTransRuntime
import PulseJSON
import PulseKit
import PulseProtocol

extension IngestCore {
    /// Sends BIDIRECTIONAL_CONTROL_RPC `route` with `arguments` to every connected session of `app`,
    /// concurrently, and collects one outcome per connection (sorted by connection ID).
    func sendControl(
        app: String, route: ControlRoute, arguments: JSONValue, timeout: Duration
    ) async -> [IngestControlOutcome] {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.field("route", route.name)
        writer.key("args")
        writer.value(arguments)
        writer.field("schemaVersion", 1)
        writer.endObject()
        let payload = writer.bytes
        let targets = registry.connections(of: app)
        let outcomes = await withTaskGroup(of: IngestControlOutcome.self) { group in
            for target in targets {
                group.addTask {
                    await Self.request(
                        payload, connectionId: target.connectionId, on: target.connection, timeout: timeout)
                }
            }
            var outcomes: [IngestControlOutcome] = []
            for await outcome in group {
                outcomes.append(outcome)
            }
            return outcomes
        }
        return outcomes.sorted { $0.connectionId < $1.connectionId }
    }

    private static func request(
        _ payload: [UInt8], connectionId: String, on connection: MsgTransConnection, timeout: Duration
    ) async -> IngestControlOutcome {
        let response: MsgTransMessage
        do {
            response = try await connection.request(
                bizType: PulseBizType.bidirectionalControlRPC.rawValue, payload: payload, compression: .none,
                timeout: timeout)
        } catch {
            return IngestControlOutcome(connectionId: connectionId, failure: "\(error.code)")
        }
        guard let envelope = try? JSONValue.parse(response.payload), case .object = envelope else {
            return IngestControlOutcome(connectionId: connectionId, failure: "response is not a JSON object")
        }
        var code = 0
        switch envelope["code"] {
        case .int(let value)?: code = Int(value)
        case .uint(let value)?: code = Int(clamping: value)
        default: break
        }
        var message: String?
        if case .string(let text)? = envelope["msg"] {
            message = text
        }
        return IngestControlOutcome(connectionId: connectionId, code: code, message: message, data: envelope["data"])
    }
}
