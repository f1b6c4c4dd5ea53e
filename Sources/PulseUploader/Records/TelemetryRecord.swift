/// Anything the uploader can queue: one record of one of the eight kinds the uploader understands.
///
/// Each kind becomes one OTLP item when it is recorded (see `docs/uploader.md` for the exact mapping):
/// logs, events, crashes, exits, session summaries and attachments are log records (`/v1/logs`), spans go to
/// `/v1/traces` and metric points to `/v1/metrics`.
public enum TelemetryRecord: Sendable {
    /// A log line.
    case log(LogEntry)
    /// A named event (a log record with `event.name`).
    case event(EventEntry)
    /// A crash report (a log record with `app.crash.id`).
    case crash(CrashReport)
    /// A span.
    case span(SpanEntry)
    /// One metric data point.
    case metric(MetricPoint)
    /// The app's exit (an `app.exit` event).
    case exit(ExitRecord)
    /// A session summary (an `app.session.summary` event).
    case sessionSummary(SessionSummary)
    /// A file with metadata (an `app.attachment` log record carrying the file's bytes).
    case attachment(Attachment)
}

/// The severity of a log record, with OTLP's severity numbers.
public enum Severity: Int, Sendable, CaseIterable {
    /// TRACE (1).
    case trace = 1
    /// DEBUG (5).
    case debug = 5
    /// INFO (9).
    case info = 9
    /// WARN (13).
    case warn = 13
    /// ERROR (17).
    case error = 17
    /// FATAL (21).
    case fatal = 21

    /// The OTLP `severityText`.
    public var text: String {
        switch self {
        case .trace: return "TRACE"
        case .debug: return "DEBUG"
        case .info: return "INFO"
        case .warn: return "WARN"
        case .error: return "ERROR"
        case .fatal: return "FATAL"
        }
    }
}

/// A log line.
public struct LogEntry: Sendable {
    /// The message (`body.stringValue`).
    public var body: String
    /// The severity.
    public var severity: Severity
    /// Attributes of the record.
    public var attributes: [String: AttributeValue]
    /// When it happened, in nanoseconds since the epoch; `nil` means now (the uploader's clock).
    public var timeUnixNano: Int64?
    /// The session it belongs to (`session.id`), if any.
    public var sessionId: String?

    /// Creates a log entry.
    public init(
        body: String, severity: Severity = .info, attributes: [String: AttributeValue] = [:],
        timeUnixNano: Int64? = nil, sessionId: String? = nil
    ) {
        self.body = body
        self.severity = severity
        self.attributes = attributes
        self.timeUnixNano = timeUnixNano
        self.sessionId = sessionId
    }
}

/// A named event.
public struct EventEntry: Sendable {
    /// The event name (`event.name`); must not be empty.
    public var name: String
    /// Attributes of the event.
    public var attributes: [String: AttributeValue]
    /// When it happened, in nanoseconds since the epoch; `nil` means now.
    public var timeUnixNano: Int64?
    /// The session it belongs to (`session.id`), if any.
    public var sessionId: String?

    /// Creates an event.
    public init(
        name: String, attributes: [String: AttributeValue] = [:], timeUnixNano: Int64? = nil,
        sessionId: String? = nil
    ) {
        self.name = name
        self.attributes = attributes
        self.timeUnixNano = timeUnixNano
        self.sessionId = sessionId
    }
}

/// A crash report.
///
/// `crashId` identifies the crash, not the report: give the same id every time the same crash is reported
/// (for example an id stored with the crash dump), and the backend counts it once. When `nil`, the uploader
/// generates one; it is returned in the ``RecordReceipt`` so a caller can keep it for later attempts.
public struct CrashReport: Sendable {
    /// The crash id (`app.crash.id`), or `nil` to generate one.
    public var crashId: String?
    /// The crash message (`body` and `exception.message`).
    public var message: String
    /// The stack trace (`exception.stacktrace`), if known.
    public var stack: String?
    /// The exception or signal type (`exception.type`), if known.
    public var exceptionType: String?
    /// Further attributes.
    public var attributes: [String: AttributeValue]
    /// When the crash happened, in nanoseconds since the epoch; `nil` means now.
    public var timeUnixNano: Int64?
    /// The session it ended (`session.id`), if any.
    public var sessionId: String?

    /// Creates a crash report.
    public init(
        crashId: String? = nil, message: String, stack: String? = nil, exceptionType: String? = nil,
        attributes: [String: AttributeValue] = [:], timeUnixNano: Int64? = nil, sessionId: String? = nil
    ) {
        self.crashId = crashId
        self.message = message
        self.stack = stack
        self.exceptionType = exceptionType
        self.attributes = attributes
        self.timeUnixNano = timeUnixNano
        self.sessionId = sessionId
    }
}

/// A span.
public struct SpanEntry: Sendable {
    /// The OTLP span kind.
    public enum Kind: Int, Sendable, CaseIterable {
        /// Unspecified (0).
        case unspecified = 0
        /// Internal (1).
        case `internal` = 1
        /// Server (2).
        case server = 2
        /// Client (3).
        case client = 3
        /// Producer (4).
        case producer = 4
        /// Consumer (5).
        case consumer = 5
    }

    /// The OTLP status code.
    public enum Status: Int, Sendable, CaseIterable {
        /// Unset (0).
        case unset = 0
        /// Ok (1).
        case ok = 1
        /// Error (2).
        case error = 2
    }

    /// The span name; must not be empty.
    public var name: String
    /// 32 lowercase hex characters, not all zero; `nil` to generate one.
    public var traceId: String?
    /// 16 lowercase hex characters, not all zero; `nil` to generate one.
    public var spanId: String?
    /// The parent's span id (16 lowercase hex characters), if any.
    public var parentSpanId: String?
    /// The span kind.
    public var kind: Kind
    /// The start, in nanoseconds since the epoch; `nil` means now.
    public var startTimeUnixNano: Int64?
    /// The end, in nanoseconds since the epoch; `nil` means the start.
    public var endTimeUnixNano: Int64?
    /// The status code.
    public var status: Status
    /// The status message, if any.
    public var statusMessage: String?
    /// Attributes of the span.
    public var attributes: [String: AttributeValue]

    /// Creates a span.
    public init(
        name: String, traceId: String? = nil, spanId: String? = nil, parentSpanId: String? = nil,
        kind: Kind = .internal, startTimeUnixNano: Int64? = nil, endTimeUnixNano: Int64? = nil,
        status: Status = .unset, statusMessage: String? = nil, attributes: [String: AttributeValue] = [:]
    ) {
        self.name = name
        self.traceId = traceId
        self.spanId = spanId
        self.parentSpanId = parentSpanId
        self.kind = kind
        self.startTimeUnixNano = startTimeUnixNano
        self.endTimeUnixNano = endTimeUnixNano
        self.status = status
        self.statusMessage = statusMessage
        self.attributes = attributes
    }
}

/// One metric data point.
///
/// Its identity is the series (name, resource, attributes) plus its start and end time; record one point
/// per series and interval.
public struct MetricPoint: Sendable {
    /// A point's value.
    public enum Value: Sendable, Equatable {
        /// An integer (`asInt`).
        case int(Int64)
        /// A double (`asDouble`).
        case double(Double)
    }

    /// The metric type.
    public enum Kind: Sendable, Equatable {
        /// A gauge: the value at `timeUnixNano`.
        case gauge
        /// A sum over `startTimeUnixNano…timeUnixNano`.
        case sum(monotonic: Bool, temporality: Temporality)
    }

    /// The aggregation temporality of a sum.
    public enum Temporality: Int, Sendable, CaseIterable {
        /// Delta (1): the change since the previous point.
        case delta = 1
        /// Cumulative (2): the total since `startTimeUnixNano`.
        case cumulative = 2
    }

    /// The metric name; must not be empty.
    public var name: String
    /// The value.
    public var value: Value
    /// The metric type.
    public var kind: Kind
    /// The unit (UCUM, e.g. `ms`, `By`, `1`), if any.
    public var unit: String?
    /// The point's attributes (part of the series identity).
    public var attributes: [String: AttributeValue]
    /// The start of the interval, in nanoseconds since the epoch; `nil` means the point's time.
    public var startTimeUnixNano: Int64?
    /// The point's time (the end of the interval), in nanoseconds since the epoch; `nil` means now.
    public var timeUnixNano: Int64?

    /// Creates a metric point.
    public init(
        name: String, value: Value, kind: Kind = .gauge, unit: String? = nil,
        attributes: [String: AttributeValue] = [:], startTimeUnixNano: Int64? = nil, timeUnixNano: Int64? = nil
    ) {
        self.name = name
        self.value = value
        self.kind = kind
        self.unit = unit
        self.attributes = attributes
        self.startTimeUnixNano = startTimeUnixNano
        self.timeUnixNano = timeUnixNano
    }
}

/// The app's exit: why it ended.
public struct ExitRecord: Sendable {
    /// Why the app exited (`app.exit.reason`), e.g. `user`, `signal`, `oom`, `crash`; must not be empty.
    public var reason: String
    /// The exit status (`app.exit.code`), if known.
    public var code: Int64?
    /// Further attributes.
    public var attributes: [String: AttributeValue]
    /// When it exited, in nanoseconds since the epoch; `nil` means now.
    public var timeUnixNano: Int64?
    /// The session it ended (`session.id`), if any.
    public var sessionId: String?

    /// Creates an exit record.
    public init(
        reason: String, code: Int64? = nil, attributes: [String: AttributeValue] = [:], timeUnixNano: Int64? = nil,
        sessionId: String? = nil
    ) {
        self.reason = reason
        self.code = code
        self.attributes = attributes
        self.timeUnixNano = timeUnixNano
        self.sessionId = sessionId
    }
}

/// A summary of one session.
public struct SessionSummary: Sendable {
    /// The session (`session.id`); must not be empty.
    public var sessionId: String
    /// How long it lasted (`app.session.duration_ms`), if known.
    public var durationMilliseconds: Int64?
    /// Further attributes (counts, flags).
    public var attributes: [String: AttributeValue]
    /// When the session ended, in nanoseconds since the epoch; `nil` means now.
    public var timeUnixNano: Int64?

    /// Creates a session summary.
    public init(
        sessionId: String, durationMilliseconds: Int64? = nil, attributes: [String: AttributeValue] = [:],
        timeUnixNano: Int64? = nil
    ) {
        self.sessionId = sessionId
        self.durationMilliseconds = durationMilliseconds
        self.attributes = attributes
        self.timeUnixNano = timeUnixNano
    }
}

/// A file and its metadata.
///
/// The file is read and copied into the queue when it is recorded, so it may be deleted afterwards.
public struct Attachment: Sendable {
    /// The file to read.
    public var path: String
    /// The name sent (`attachment.name`); defaults to the file's last path component.
    public var name: String?
    /// The media type (`attachment.content_type`); defaults to `application/octet-stream`.
    public var contentType: String?
    /// The crash this file belongs to (`attachment.crash_id`), if any.
    public var crashId: String?
    /// Further metadata.
    public var attributes: [String: AttributeValue]
    /// When it was captured, in nanoseconds since the epoch; `nil` means now.
    public var timeUnixNano: Int64?

    /// Creates an attachment.
    public init(
        path: String, name: String? = nil, contentType: String? = nil, crashId: String? = nil,
        attributes: [String: AttributeValue] = [:], timeUnixNano: Int64? = nil
    ) {
        self.path = path
        self.name = name
        self.contentType = contentType
        self.crashId = crashId
        self.attributes = attributes
        self.timeUnixNano = timeUnixNano
    }
}

/// What the uploader assigned to a record it queued.
public struct RecordReceipt: Sendable, Equatable {
    /// The record's id: `log.record.uid` (a ULID, see `docs/uploader.md`) for log records (every kind except spans
    /// and metrics), `traceId` +
    /// `spanId` for spans, and the series key (`name|start|end`) for metric points.
    public var recordId: String
    /// The crash id, for crash reports.
    public var crashId: String?
    /// The signal the record goes to.
    package var signal: Signal
    /// The queue class, which decides drop order and urgency.
    public var recordClass: RecordClass
    /// The queue's row id (grows with every record; useful for ordering and tests).
    public var sequence: Int64
}

extension TelemetryRecord {
    /// The JSON-lines `type` of the record (used in the call log).
    var typeName: String {
        switch self {
        case .log: "log"
        case .event: "event"
        case .crash: "crash"
        case .span: "span"
        case .metric: "metric"
        case .exit: "exit"
        case .sessionSummary: "session_summary"
        case .attachment: "attachment"
        }
    }
}
