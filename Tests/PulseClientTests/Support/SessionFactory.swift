import PulseClient
import PulseKit
import PulseProtocol
import PulseTestSupport

/// A session against `127.0.0.1:port` with a manual clock and a generator that always draws the top
/// of the jitter range (so every backoff delay equals its cap and tests know where to advance).
func makeSession(
    port: Int, clock: ManualClock = ManualClock(), keepConnected: Bool = true, requestTimeout: Duration = .seconds(10),
    identity: ConnectRequest = testIdentity()
) -> PulseClientSession {
    var configuration = PulseClientConfiguration(host: "127.0.0.1", port: port, identity: identity)
    configuration.keepConnected = keepConnected
    configuration.requestTimeout = requestTimeout
    return PulseClientSession(configuration: configuration, clock: clock, random: RandomSource { .max })
}

/// A small event batch payload (the test server does not decode batches).
func smallBatch(_ id: String = "b1") -> [UInt8] {
    bytes(#"{"identity":{},"events":[],"batchId":"\#(id)"}"#)
}

/// A batch payload above the 1024-byte compression threshold.
func largeBatch(_ id: String = "big") -> [UInt8] {
    bytes(#"{"identity":{},"events":[],"batchId":"\#(id)","pad":""# + String(repeating: "x", count: 4000) + #""}"#)
}
