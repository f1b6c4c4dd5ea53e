/// The one error shape of PulseGate: every module instantiates it with its own code enum instead of
/// declaring an error struct of its own.
///
/// A module declares its codes and names its error type once:
///
/// ```swift
/// public enum GatewayErrorCode: String, PulseErrorCode {
///     case invalidConfiguration
///     case storage
/// }
/// public typealias GatewayError = PulseError<GatewayErrorCode>
///
/// throw GatewayError(.storage, "the outbox could not be written", underlying: error)
/// ```
///
/// An error carries a ``code`` to branch on (its `rawValue` is the stable code string for logs,
/// metrics labels and HTTP error bodies), a human-readable ``message``, the ``underlying`` cause,
/// the ``file`` and ``line`` that created it, and the module's ``detail`` (``PulseErrorNoDetail``
/// unless the code type names another ``PulseErrorDetail``).
///
/// ``description`` is `<ErrorName>.<code>: <message><detail>` followed by
/// ` (underlying: <cause>)` when there is a cause, for example
/// `MsgTransRuntimeError.timeout: no response before the deadline`. Messages are written to name
/// what failed and where, never payload bytes or secrets, and the description adds nothing else;
/// a code type whose causes may quote their input (a `DecodingError` does) describes them with
/// ``PulseErrorCode/describe(underlying:)``.
public struct PulseError<ErrorCode: PulseErrorCode>: Error, CustomStringConvertible, CustomDebugStringConvertible {
    /// The module's code type, so callers can name it `GatewayError.Code`.
    public typealias Code = ErrorCode

    /// What went wrong, coarse enough to branch on.
    public var code: Code
    /// A human-readable explanation; never contains payload bytes or secrets.
    public var message: String
    /// The lower-level cause, if any.
    public var underlying: (any Error & Sendable)?
    /// The module's extra facts about the failure (a byte offset, a SQLite result code, …).
    public var detail: Code.Detail
    /// The source file that created the error (`#fileID`, `Module/File.swift`).
    public var file: String
    /// The line in ``file`` that created the error.
    public var line: UInt

    /// Creates an error; `file` and `line` default to the caller's position.
    public init(
        _ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil, detail: Code.Detail = .init(),
        file: String = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.detail = detail
        self.file = file
        self.line = line
    }

    /// `<ErrorName>.<code>: <message><detail>` and ` (underlying: <cause>)` when there is a cause.
    public var description: String {
        var text = "\(Code.errorName).\(code.rawValue): \(message)\(detail.descriptionSuffix)"
        if let underlying {
            text += " (underlying: \(Code.describe(underlying: underlying)))"
        }
        return text
    }

    /// ``description`` followed by the position that created the error: ` [Module/File.swift:42]`.
    public var debugDescription: String {
        "\(description) [\(file):\(line)]"
    }
}

/// The codes of one module's ``PulseError``.
///
/// Conform a `String` enum; its case names are the stable code strings.
public protocol PulseErrorCode: RawRepresentable<String>, Hashable, Sendable {
    /// The module's extra facts about a failure; ``PulseErrorNoDetail`` unless the module names one.
    associatedtype Detail: PulseErrorDetail = PulseErrorNoDetail

    /// The module's name for its error type, which starts ``PulseError/description``.
    ///
    /// Defaults to the name of the code type without its `Code` suffix: `GatewayErrorCode` gives
    /// `GatewayError`, the name of the module's `typealias`.
    static var errorName: String { get }

    /// How ``PulseError/description`` renders an underlying cause.
    ///
    /// Defaults to the cause's own description. A module whose causes may quote their input
    /// returns less (for example only the cause's type).
    static func describe(underlying: any Error & Sendable) -> String
}

extension PulseErrorCode {
    public static var errorName: String {
        let name = String(describing: Self.self)
        return name.hasSuffix("Code") ? String(name.dropLast(4)) : name
    }

    public static func describe(underlying: any Error & Sendable) -> String {
        String(describing: underlying)
    }
}

/// Extra facts a module records about its failures, beside the code and message.
///
/// `init()` is the detail of an error that records none; ``descriptionSuffix`` is appended to the
/// message in ``PulseError/description`` and must not contain payload bytes or secrets.
public protocol PulseErrorDetail: Sendable {
    /// A detail that records nothing.
    init()
    /// Appended to the message in ``PulseError/description`` (empty, or starting with a space).
    var descriptionSuffix: String { get }
}

/// The detail of modules whose errors carry nothing beyond code, message and cause.
public struct PulseErrorNoDetail: PulseErrorDetail, Hashable {
    /// The only value.
    public init() {}

    /// Always empty.
    public var descriptionSuffix: String { "" }
}
