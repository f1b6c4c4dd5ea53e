import MsgTrans
import PulseTestSupport

@testable import MsgTransRuntime

/// A delegate whose handler records each request and then waits for the gate.
struct GatedDelegate: MsgTransConnectionDelegate {
    let gate: Gate
    let arrived: Tally

    func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async throws -> MsgTransReply {
        arrived.increment()
        await gate.wait()
        return MsgTransReply(request.payload)
    }
}

/// Starts a server whose handlers hold every request at `gate` (counting arrivals in `arrived`)
/// and connects a client to it that keeps at most `maxOutstandingRequests` in flight (the default
/// bound when `nil`). Both run on `loop` when one is given (a loop on a manual clock, say): the
/// test then shuts it down.
func startGatedServer(
    configuration: MsgTransServerConfiguration = MsgTransServerConfiguration(), maxOutstandingRequests: Int? = nil,
    loop: MsgTransEventLoop? = nil
) async throws -> (gate: Gate, arrived: Tally, server: MsgTransServer, client: MsgTransConnection) {
    let gate = Gate()
    let arrived = Tally()
    let server = try await startServer(configuration: configuration, loop: loop) { _ in
        GatedDelegate(gate: gate, arrived: arrived)
    }
    var clientConfiguration = MsgTransConfiguration()
    if let maxOutstandingRequests {
        clientConfiguration.maxOutstandingRequests = maxOutstandingRequests
    }
    let client = try await MsgTransConnection.connect(
        host: "127.0.0.1", port: server.port, configuration: clientConfiguration, on: loop ?? .shared)
    return (gate, arrived, server, client)
}

/// Connects a client to a hand-written peer: a raw socket the test plays, accepted on a listener
/// of its own (closed once the connection is accepted).
func connectToRawPeer(configuration: MsgTransConfiguration = MsgTransConfiguration()) async throws -> (
    client: MsgTransConnection, peer: RawSocket
) {
    let listener = RawListener()
    let client = try await MsgTransConnection.connect(
        host: "127.0.0.1", port: listener.port, configuration: configuration)
    return (client, await listener.accept())
}
