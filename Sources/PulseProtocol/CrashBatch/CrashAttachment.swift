import PulseJSON
public import PulseKit

/// Metadata of one crash attachment (a minidump, a log tail, a screenshot). The bytes themselves are
/// never part of the batch; they travel separately, identified by their SHA-256.
///
/// Wire keys in canonical order, all required: `name`, `contentType`, `byteCount` (int64, >= 0),
/// `sha256` (64 lowercase hex characters).
public struct CrashAttachment: Sendable, Hashable {
    /// The attachment's file name.
    public var name: String
    /// Its media type, for example `application/x-minidump`.
    public var contentType: String
    /// Its size in bytes.
    public var byteCount: Int64
    /// Its SHA-256 digest as 64 lowercase hex characters.
    public var sha256: String

    /// Creates attachment metadata.
    public init(name: String, contentType: String, byteCount: Int64, sha256: String) {
        self.name = name
        self.contentType = contentType
        self.byteCount = byteCount
        self.sha256 = sha256
    }

    /// Throws ``PulseProtocolError/Code/invalidValue`` when `byteCount` is negative or `sha256` is
    /// not 64 lowercase hex characters.
    public func validate() throws(PulseProtocolError) {
        if byteCount < 0 {
            throw PulseProtocolError(.invalidValue, "byteCount: must not be negative")
        }
        let isHex = sha256.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        if sha256.utf8.count != 64 || !isHex {
            throw PulseProtocolError(.invalidValue, "sha256: expected 64 lowercase hex characters")
        }
    }
}

extension CrashAttachment: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        CrashAttachment(name: "", contentType: "", byteCount: 0, sha256: ""),
        .required("name", \.name), .required("contentType", \.contentType), .required("byteCount", \.byteCount),
        .required("sha256", \.sha256),
        validate: { value throws(PulseProtocolError) in try value.validate() })
}
