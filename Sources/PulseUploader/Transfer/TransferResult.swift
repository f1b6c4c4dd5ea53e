/// What an out-of-process transfer saw for one batch, handed to ``Uploader/settle(_:_:)``.
public enum TransferResult: Sendable {
    /// A response arrived: its status, headers (`Retry-After`, `Apsio-Duplicate`,
    /// `Apsio-Policy-Revision` are read) and body (an OTLP partial success is read).
    case response(UploadResponse)
    /// No response arrived (connection refused or dropped, timeout, TLS failure): the endpoint backs off,
    /// as after a foreground send that got no answer. `message` names the failure (never a payload).
    case failed(message: String)
}
