import PulseCompression
import PulseKit

/// Streaming, bounded inflation of request bodies in the gzip, zlib and raw deflate formats
/// (`PulseCompression`'s codec and its shared context pool).
enum ZlibInflater {
    typealias Format = Zlib.Format

    /// Whether `data` starts with a valid RFC 1950 header (method 8, window ≤ 32 KiB, check bits).
    static func hasZlibHeader(_ data: [UInt8]) -> Bool { Zlib.hasZlibHeader(data) }

    static func inflate(_ input: [UInt8], format: Format, maxOutputBytes: Int) throws(HTTPServerError) -> [UInt8] {
        guard input.count <= Int(UInt32.max) else {
            throw HTTPServerError(.bodyTooLarge, "compressed body is larger than 4 GiB")
        }
        do throws(CompressionError) {
            return try Zlib.decompress(input, format: format, maxOutputBytes: maxOutputBytes)
        } catch {
            switch error.code {
            case .decompressedTooLarge:
                throw HTTPServerError(.bodyTooLarge, "decoded body exceeds \(maxOutputBytes) bytes")
            case .truncatedStream:
                throw HTTPServerError(.malformedBody, "compressed body is truncated")
            case .trailingBytes:
                throw HTTPServerError(.malformedBody, "data after the end of the compressed stream")
            default:
                throw HTTPServerError(.malformedBody, "compressed body is corrupt")
            }
        }
    }
}
