import PulseCompression
import PulseKit

/// The `Content-Encoding` of a sealed batch, chosen when it is sealed and stored with it.
public enum BodyEncoding: String, Sendable, Equatable, CaseIterable {
    /// gzip (RFC 1952), which every OTLP/HTTP server must accept.
    case gzip
    /// zstd (RFC 8878), one frame at level 3.
    case zstd
}

/// One-shot compression and decompression of batch bodies, over the project's one compression
/// module (`PulseCompression`: zstd level 3 through its shared context pool, gzip through libz).
enum BodyCompression {
    /// Compresses `input` with `encoding`.
    static func compress(_ input: [UInt8], encoding: BodyEncoding) throws(UploaderError) -> [UInt8] {
        do throws(CompressionError) {
            switch encoding {
            case .gzip: return try Zlib.compress(input, format: .gzip)
            case .zstd: return try Zstd.compress(input, level: 3)
            }
        } catch {
            throw UploaderError(.compression, "\(encoding.rawValue) compression failed: \(error.message)")
        }
    }

    /// Decompresses `input` (for tests and diagnostics); refuses output larger than `limit`.
    static func decompress(_ input: [UInt8], encoding: BodyEncoding, limit: Int = 64 << 20) throws(UploaderError)
        -> [UInt8]
    {
        do throws(CompressionError) {
            switch encoding {
            case .gzip:
                return try Zlib.decompress(input, format: .gzip, maxOutputBytes: limit)
            case .zstd:
                return try Zstd.decompress(
                    input, maxOutputBytes: limit, windowLogMax: Zstd.windowLogMax(forMaxOutputBytes: limit))
            }
        } catch {
            throw UploaderError(.compression, "\(encoding.rawValue): \(error.message)")
        }
    }
}
