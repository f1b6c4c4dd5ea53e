package import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

/// The single error type of the MsgTransRuntime module: the shared ``PulseError`` shape with
/// ``MsgTransRuntimeErrorCode``.
///
/// Every pending request of a connection that closes fails with the close reason: ``MsgTransRuntimeErrorCode/connectionClosed``
/// for a local or peer close and ``MsgTransRuntimeErrorCode/protocolViolation`` when the peer broke the framing rules.
/// Descriptions name codes, numbers and system error names only, never payload bytes.
package typealias MsgTransRuntimeError = PulseError<MsgTransRuntimeErrorCode>

/// What went wrong in the MsgTransRuntime module.
package enum MsgTransRuntimeErrorCode: String, PulseErrorCode, CaseIterable {
    /// The connection is closed (locally, by the peer, by shutdown or by the admission hook).
    case connectionClosed
    /// The request got no response (or no in-flight slot) before its deadline.
    case timeout
    /// The awaiting task was cancelled.
    case cancelled
    /// The peer violated the msgtrans framing rules; the connection was closed.
    case protocolViolation
    /// A bounded resource is full (for example the outbound buffer when sending a one-way message).
    case overloaded
    /// A payload could not be decompressed; the frame boundaries are intact and the connection stays open.
    case malformedPayload
    /// An inbound request handler threw or no handler is installed.
    case handlerFailed
    /// An outbound payload could not be framed or compressed.
    case encodingFailed
    /// A connection attempt was refused or failed.
    case connectFailed
    /// A host name or address could not be resolved or parsed.
    case invalidAddress
    /// A system call (socket, bind, listen, epoll, ...) failed.
    case systemCallFailed
}

extension MsgTransRuntimeError {
    /// An error for a failed system call, naming the call and `errno`.
    static func system(
        _ call: String, errno number: Int32, code: Code = .systemCallFailed, file: String = #fileID, line: UInt = #line
    ) -> MsgTransRuntimeError {
        MsgTransRuntimeError(code, "\(call) failed: \(SystemErrorName.describe(number))", file: file, line: line)
    }
}

/// Renders an `errno` value without allocating locale state.
enum SystemErrorName {
    /// `"<strerror text> (errno N)"`.
    static func describe(_ number: Int32) -> String {
        guard let text = strerror(number) else { return "errno \(number)" }
        return "\(String(cString: text)) (errno \(number))"
    }
}
