package import MsgTrans

/// Limits and policies of one connection (client or server side).
///
/// ## Bounds and back-pressure
///
/// - ``maxOutstandingRequests`` bounds this side's requests awaiting a response. A caller beyond
///   the bound waits for a slot (first come, first served); the wait counts against the request's
///   timeout.
/// - ``maxOutboundBufferBytes`` bounds the bytes queued for the socket. A request is only written
///   while the buffer is below the bound, otherwise it waits like a request without a slot.
///   A one-way message (lossy by definition) is refused with ``MsgTransRuntimeError/Code/overloaded``
///   instead of waiting. Responses are never refused or delayed (every inbound request gets
///   exactly one); while the buffer is at or over the bound the connection stops reading from the
///   socket, so a peer that sends requests without reading its responses is slowed down by TCP
///   instead of growing this buffer.
/// - ``maxConcurrentInboundRequests`` bounds the peer's requests and one-way messages whose
///   handlers are running or that wait for admission. A request beyond it is answered at once
///   with the reply built by ``overloadResponder``; a one-way message beyond it is dropped and
///   counted.
package struct MsgTransConfiguration: Sendable {
    /// Limits applied to every inbound frame. Default: the codec defaults.
    package var frameLimits: FrameLimits
    /// When outbound payloads are compressed. Default: the codec default (1 KiB, zstd level 3).
    package var compressionPolicy: CompressionPolicy
    /// The default timeout of ``MsgTransConnection/request(bizType:payload:compression:timeout:)``. Default 15 s.
    package var requestTimeout: Duration
    /// Requests of this side awaiting a response at once. Default 8.
    package var maxOutstandingRequests: Int
    /// Inbound requests and one-way messages handled at once. Default 64.
    package var maxConcurrentInboundRequests: Int
    /// Bytes queued for the socket before requests wait and one-way sends fail. Default 4 MiB.
    package var maxOutboundBufferBytes: Int
    /// How long ``MsgTransConnection/connect(host:port:configuration:delegate:statistics:on:)`` may take. Default 10 s.
    package var connectTimeout: Duration
    /// How long a connection whose peer closed its sending side keeps running handlers and
    /// flushing their responses before it is closed. Default 15 s.
    package var halfCloseGracePeriod: Duration
    /// Builds the reply sent when the peer exceeds ``maxConcurrentInboundRequests`` (or the server
    /// is shutting down). Runs on the event loop thread: it must be fast and must not block.
    /// Default: an empty payload.
    package var overloadResponder: @Sendable (FrameHeader) -> MsgTransReply
    /// Builds the reply sent when a request cannot be answered by its handler: the handler threw
    /// (``MsgTransRuntimeError/Code/handlerFailed``, the thrown error as `underlying`), the payload
    /// could not be decompressed (``MsgTransRuntimeError/Code/malformedPayload``) or no handler is
    /// installed. Runs on the handler's task. Default: an empty payload.
    package var failureResponder: @Sendable (FrameHeader, MsgTransRuntimeError) -> MsgTransReply

    /// Creates a configuration with the documented defaults.
    package init() {
        frameLimits = FrameLimits()
        compressionPolicy = CompressionPolicy()
        requestTimeout = .seconds(15)
        maxOutstandingRequests = 8
        maxConcurrentInboundRequests = 64
        maxOutboundBufferBytes = 4 << 20
        connectTimeout = .seconds(10)
        halfCloseGracePeriod = .seconds(15)
        overloadResponder = { _ in MsgTransReply([]) }
        failureResponder = { _, _ in MsgTransReply([]) }
    }
}
