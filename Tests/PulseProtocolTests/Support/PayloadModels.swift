import Foundation
import PulseJSON
import PulseProtocol

/// The payload models a fixture may name, each as "decode with the fast codec, re-encode" plus
/// "decode with Codable".
enum PayloadModels {
    struct Model: Sendable {
        /// Fast-decodes the plaintext and returns the canonical re-encoding.
        let reencode: @Sendable ([UInt8]) throws -> [UInt8]
        /// Decodes the plaintext with Foundation's `JSONDecoder` (throws on failure).
        let decodeWithCodable: @Sendable ([UInt8]) throws -> Void
    }

    static func model<T: PulseJSONCodable & Codable>(_ type: T.Type) -> Model {
        Model(
            reencode: { bytes in try T(decodingJSON: bytes).encodeJSON() },
            decodeWithCodable: { bytes in _ = try JSONDecoder().decode(T.self, from: Data(bytes)) })
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
