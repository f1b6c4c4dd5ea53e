import Foundation
import PulseJSON
import PulseProtocol

/// The payload models a fixture may name, each as "decode with the fast codec, re-encode".
enum PayloadModels {
    struct Model: Sendable {
        /// Fast-decodes the plaintext and returns the canonical re-encoding.
        let reencode: @Sendable ([UInt8]) throws -> [UInt8]
    }

    static func model<T: PulseJSONCodable>(_ type: T.Type) -> Model {
        Model(reencode: { bytes in try T(decodingJSON: bytes).encodeJSON() })
    }

    static let all: [String: Model] = [
        "ConnectRequest": model(ConnectRequest.self),
        "PulseEnvelope<ConnectResult>": model(PulseEnvelope<ConnectResult>.self),
        "HeartbeatRequest": model(HeartbeatRequest.self),
        "PulseEnvelope<HeartbeatResult>": model(PulseEnvelope<HeartbeatResult>.self),
        "ConfigPullRequest": model(ConfigPullRequest.self),
        "PulseEnvelope<ConfigSnapshot>": model(PulseEnvelope<ConfigSnapshot>.self),
        "CrashBatch": model(CrashBatch.self),
        "EventBatch": model(EventBatch.self),
        "PulseEnvelope<Bool>": model(PulseEnvelope<Bool>.self),
        "UpdateCheckRequest": model(UpdateCheckRequest.self),
        "UpdateCheckResponse": model(UpdateCheckResponse.self),
        "ControlRPCRequest": model(ControlRPCRequest.self),
        "PulseEnvelope<ControlRPCResult>": model(PulseEnvelope<ControlRPCResult>.self),
    ]
}
