public import PulseJSON

/// One crash inside `CLIENT_CRASH_BATCH_UPLOAD`.
///
/// Wire keys in canonical order: `crashId` (required; the `app.crash.id`, identical on every attempt
/// to report this crash, so two reports with the same id are one crash), `timestamp` (required, epoch
/// ms of the crash), `sessionId`, `signal` (for example `SIGSEGV`), `exceptionType` (for example
/// `NSInvalidArgumentException`), `message`, `stack` (array of ``CrashFrame`` or a string), `build`
/// (required, ``CrashBuild``), `attachments` (default `[]`, metadata only), `attributes` (free-form
/// object, default `{}`). The other fields are nullable.
public struct CrashReport: Sendable, Hashable, PulseJSONCodable, WireReadable, WireWritable {
    /// The crash's stable id (`app.crash.id`).
    public var crashId: String
    /// When the crash happened, epoch milliseconds.
    public var timestamp: Int64
    /// The session that crashed, if known.
    public var sessionId: String?
    /// The fatal signal, if any.
    public var signal: String?
    /// The uncaught exception's type, if any.
    public var exceptionType: String?
    /// The exception or termination message, if any.
    public var message: String?
    /// The crashed thread's stack.
    public var stack: CrashStack?
    /// The build that crashed.
    public var build: CrashBuild
    /// Attachment metadata.
    public var attachments: [CrashAttachment]
    /// Free-form context in document order.
    public var attributes: [JSONMember]

    /// Creates a crash report.
    public init(
        crashId: String, timestamp: Int64, sessionId: String?, signal: String? = nil, exceptionType: String? = nil,
        message: String? = nil, stack: CrashStack? = nil, build: CrashBuild, attachments: [CrashAttachment] = [],
        attributes: [JSONMember] = []
    ) {
        self.crashId = crashId
        self.timestamp = timestamp
        self.sessionId = sessionId
        self.signal = signal
        self.exceptionType = exceptionType
        self.message = message
        self.stack = stack
        self.build = build
        self.attachments = attachments
        self.attributes = attributes
    }

    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        let o = try JSONObjectReader(node)
        crashId = try o.value("crashId")
        timestamp = try o.value("timestamp")
        sessionId = try o.nullable("sessionId")
        signal = try o.nullable("signal")
        exceptionType = try o.nullable("exceptionType")
        message = try o.nullable("message")
        stack = try o.nullable("stack")
        build = try o.value("build")
        attachments = try o.nullable("attachments") ?? []
        attributes = try o.members("attributes")
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.pulseCrashReport(
            crashId: crashId, timestamp: timestamp, sessionId: sessionId, signal: signal, exceptionType: exceptionType,
            message: message,
            stack: { writer in
                if let stack { stack.writeJSON(to: &writer) } else { writer.null() }
            }, build: build,
            attachments: { writer in
                for attachment in attachments { attachment.writeJSON(to: &writer) }
            },
            attributes: { $0.value(.object(attributes)) })
    }
}
