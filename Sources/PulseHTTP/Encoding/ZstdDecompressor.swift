import PulseCompression
import PulseKit

/// Streaming, bounded zstd decompression of request bodies (`PulseCompression`'s codec and its
/// shared context pool).
enum ZstdDecompressor {
    /// 2^23 = 8 MiB, the window RFC 8878 asks HTTP decoders to support at most.
    static let windowLogMax: Int32 = 23

    static func decompress(_ input: [UInt8], maxOutputBytes: Int) throws(HTTPServerError) -> [UInt8] {
        guard !input.isEmpty else { throw HTTPServerError(.malformedBody, "empty zstd body") }
        do throws(CompressionError) {
            return try Zstd.decompress(
                input, maxOutputBytes: maxOutputBytes, windowLogMax: windowLogMax, framing: .concatenatedFrames)
        } catch {
            switch error.code {
            case .decompressedTooLarge:
                throw HTTPServerError(.bodyTooLarge, "decoded body exceeds \(maxOutputBytes) bytes")
            case .truncatedStream:
                throw HTTPServerError(.malformedBody, "zstd body is truncated")
            default:
                throw HTTPServerError(.malformedBody, "zstd body is corrupt or needs a window over 8 MiB")
            }
        }
    }
}
