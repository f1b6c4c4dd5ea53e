/// A payload compression codec named in configuration (`"none"`, `"zstd"`, `"zlib"`).
///
/// The msgtrans header's compression byte stays authoritative on the wire; this is only the policy
/// telling a sender which codec to choose for payloads of at least
/// ``ConfigSnapshot/compressionMinBytes``.

import PulseKit

public enum PayloadCodec: String, Sendable, Hashable, CaseIterable, Codable {
    /// Send uncompressed.
    case none
    /// zstd, level 3 (the default).
    case zstd
    /// zlib (RFC 1950), default level.
    case zlib

    public init(from decoder: any Decoder) throws {
        try self.init(from: decoder, noun: "compression")
    }
}
