import MsgTrans
import MsgTransRuntime
package import PulseJSON
import PulseKit
package import PulseProtocol
import Synchronization

/// A handler for one allowlisted control route: receives the request (route, arguments, schema
/// version) and returns the route-specific result, sent as the envelope's `data` with code 0.
///
/// Throwing answers with an error envelope: a ``PulseClientError`` with a
/// ``PulseClientError/responseCode`` answers that code (for example 400 for arguments the handler
/// rejects), anything else answers 500. The handler runs on its own task and may itself send
/// requests on the same session, even on the connection the control request arrived on.
package typealias PulseControlHandler = @Sendable (ControlRPCRequest) async throws -> JSONValue

/// Answers inbound control RPCs from the allowlist and the owner's handlers.
final class ControlRouter: Sendable {
    private let handlers = Mutex<[PulseClientControlRoute: PulseControlHandler]>([:])

    func setHandler(_ handler: PulseControlHandler?, for route: PulseClientControlRoute) {
        handlers.withLock { $0[route] = handler }
    }

    /// Answers one BIDIRECTIONAL_CONTROL_RPC request payload with an envelope.
    func answer(_ payload: [UInt8]) async -> [UInt8] {
        let request: ControlRPCRequest
        do {
            request = try ControlRPCRequest(decodingJSON: payload)
        } catch {
            return Self.failure(.badRequest, "malformed control request: \(error.message)")
        }
        guard let route = PulseClientControlRoute(rawValue: request.route.name),
            let handler = handlers.withLock({ $0[route] })
        else {
            return Self.failure(.notFound, "unsupported control route \(request.route.name)")
        }
        do {
            let result = try await handler(request)
            return PulseEnvelope<ControlRPCResult>.ok(ControlRPCResult(result)).encodeJSON()
        } catch let error as PulseClientError {
            let code = error.responseCode.flatMap(PulseResponseCode.init(rawValue:)) ?? .internalError
            return Self.failure(code == .ok ? .internalError : code, "control route \(route.name) failed")
        } catch {
            return Self.failure(.internalError, "control route \(route.name) failed")
        }
    }

    /// An error envelope with no data.
    static func failure(_ code: PulseResponseCode, _ message: String) -> [UInt8] {
        PulseEnvelope<ControlRPCResult>.failure(code, message).encodeJSON()
    }
}
