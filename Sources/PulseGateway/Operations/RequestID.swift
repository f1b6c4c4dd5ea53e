import PulseHTTP
import PulseHashing
import PulseKit

/// The id of one HTTP request, so a device's report, the gateway's log lines and a forwarding
/// failure can be matched: the client's `X-Request-Id` when it is acceptable, else a generated
/// one. Every response carries it back in `X-Request-Id`, every log line about the request has it
/// as `requestId`, and the outbox rows the request created store it (`request_id`, migration
/// `007`), so the forwarder's lines about those rows name it too.
///
/// Acceptable: 1-128 characters of `A-Z a-z 0-9 . _ ~ : -` (the alphabet of the Apsio ids; a
/// UUID, a ULID and a W3C trace id all fit). Anything else — longer, empty, other characters — is
/// ignored and replaced, never echoed, so a client cannot put control characters or markup into
/// logs, headers or the status page. Generated ids are 32 lower-case hex digits (128 bits from
/// the gateway's injected ``RandomSource``).
struct RequestID: Sendable, Equatable, CustomStringConvertible {
    /// The request and response header.
    static let header = "X-Request-Id"
    /// The longest id accepted from a client.
    static let maxLength = 128

    /// The id's text.
    let value: String

    var description: String { value }

    /// The client's id when acceptable, else a new one.
    init(_ headers: HTTPHeaders, random: RandomSource) {
        if let offered = headers[Self.header], let accepted = Self(accepting: offered) {
            self = accepted
        } else {
            self = Self.generate(random)
        }
    }

    /// `value` as an id, or `nil` when it is not acceptable.
    init?(accepting value: String) {
        guard value.utf8.count <= Self.maxLength, IntakeHeaders.isValidIdentifier(value) else { return nil }
        self.value = value
    }

    /// A new id: 16 random bytes as hex.
    static func generate(_ random: RandomSource) -> RequestID {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0..<2 {
            let draw = random.nextUInt64()
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: draw >> UInt64(shift)))
            }
        }
        return RequestID(hex: Hex.encode(bytes))
    }

    private init(hex: String) {
        value = hex
    }

    /// Sets `X-Request-Id` on `response`.
    func stamp(_ response: inout HTTPResponse) {
        response.headers.set(name: Self.header, value: value)
    }
}
