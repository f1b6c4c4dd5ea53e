/// Bounded decoding of `Content-Encoding`d request bodies.
///
/// Decoding streams into chunks and stops as soon as the output would pass `maxOutputBytes`, so a
/// compression bomb never makes it allocate much beyond the limit (at most one 64 KiB chunk more).
///
/// Supported codings (names are case-insensitive; a list such as `gzip, zstd` is undone last-first):
/// - `identity` (or no header): the body as is, still subject to the limit.
/// - `gzip` / `x-gzip`: RFC 1952, including several concatenated members.
/// - `deflate`: RFC 1950 zlib as the HTTP spec defines it. Some clients send raw RFC 1951 deflate
///   without the zlib wrapper; a body whose first two bytes are not a valid zlib header is decoded as
///   raw deflate instead.
/// - `zstd`: RFC 8878 frames (several frames are concatenated); the window is capped at 8 MiB, as
///   RFC 8878 asks of HTTP decoders, which bounds the decoder's own memory too.

import PulseCompression
import PulseKit

package enum BodyDecoder {
    /// The most codings accepted in one `Content-Encoding` list.
    static let maxCodings = 4

    /// Decodes `body` according to a `Content-Encoding` header value.
    ///
    /// - Parameters:
    ///   - body: the body as received.
    ///   - contentEncoding: the header's value; `nil` or empty means identity.
    ///   - maxOutputBytes: the largest decoded size accepted (also applied to every intermediate
    ///     stage of a coding list).
    /// - Returns: the decoded bytes.
    /// - Throws: ``HTTPServerError`` with `bodyTooLarge` (answer 413) when the output would pass
    ///   `maxOutputBytes`, `malformedBody` (400) for corrupt, truncated or trailing data, and
    ///   `unsupportedEncoding` (415) for an unknown coding.
    package static func decode(
        _ body: [UInt8], contentEncoding: String?, maxOutputBytes: Int
    ) throws(HTTPServerError) -> [UInt8] {
        let codings = try parseCodings(contentEncoding)
        var data = body
        if codings.isEmpty || codings.allSatisfy({ $0 == .identity }) {
            try checkLimit(data.count, maxOutputBytes)
            return data
        }
        for coding in codings.reversed() {
            switch coding {
            case .identity:
                continue
            case .gzip:
                data = try ZlibInflater.inflate(data, format: .gzip, maxOutputBytes: maxOutputBytes)
            case .deflate:
                let format: ZlibInflater.Format = ZlibInflater.hasZlibHeader(data) ? .zlib : .raw
                data = try ZlibInflater.inflate(data, format: format, maxOutputBytes: maxOutputBytes)
            case .zstd:
                data = try ZstdDecompressor.decompress(data, maxOutputBytes: maxOutputBytes)
            }
        }
        return data
    }

    enum Coding: Equatable {
        case identity
        case gzip
        case deflate
        case zstd
    }

    static func parseCodings(_ header: String?) throws(HTTPServerError) -> [Coding] {
        guard let header else { return [] }
        var codings: [Coding] = []
        for element in header.split(separator: ",", omittingEmptySubsequences: false) {
            let name = element.trimmingASCIIWhitespace().lowercased()
            switch name {
            case "", "identity": codings.append(.identity)
            case "gzip", "x-gzip": codings.append(.gzip)
            case "deflate": codings.append(.deflate)
            case "zstd": codings.append(.zstd)
            default:
                throw HTTPServerError(.unsupportedEncoding, "unsupported content coding \"\(name.prefix(32))\"")
            }
        }
        guard codings.count <= maxCodings else {
            throw HTTPServerError(.unsupportedEncoding, "more than \(maxCodings) content codings")
        }
        return codings
    }

    static func checkLimit(_ count: Int, _ limit: Int) throws(HTTPServerError) {
        guard count <= limit else {
            throw HTTPServerError(.bodyTooLarge, "decoded body exceeds \(limit) bytes")
        }
    }
}

extension Substring {
    /// The substring without leading and trailing spaces and tabs.
    func trimmingASCIIWhitespace() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
