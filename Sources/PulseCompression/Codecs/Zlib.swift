import CZlib
import PulseKit

/// The deflate family through libz (RFC 1950 zlib, RFC 1952 gzip, RFC 1951 raw deflate): one-shot
/// compression and bounded, streaming decompression through inflate streams reused from
/// ``CompressionContextPool/shared``.
///
/// Compression creates its deflate stream per call (`deflateInit2`/`deflateEnd`): nothing on a hot
/// path deflates (msgtrans and the outbox use zstd; gzip is the uploader's batch body, once per
/// sealed batch).
package enum Zlib {
    /// `Z_DEFAULT_COMPRESSION`, whose zlib stream starts with `78 9c`.
    package static let defaultLevel: Int32 = Z_DEFAULT_COMPRESSION

    /// The wrapper around the deflate data.
    package enum Format: Sendable {
        /// RFC 1950 (header `78 …`, Adler-32 trailer). Decompression accepts any valid zlib
        /// header, refuses gzip, raw deflate and preset dictionaries.
        case zlib
        /// RFC 1952; decompression decodes several concatenated members one after another.
        case gzip
        /// RFC 1951, no wrapper.
        case raw

        var windowBits: Int32 {
            switch self {
            case .zlib: return 15
            case .gzip: return 15 + 16
            case .raw: return -15
            }
        }
    }

    /// Whether `data` starts with a valid RFC 1950 header (method 8, window ≤ 32 KiB, check bits).
    package static func hasZlibHeader(_ data: [UInt8]) -> Bool {
        guard data.count >= 2 else { return false }
        let cmf = Int(data[0])
        let flg = Int(data[1])
        return cmf & 0x0F == 8 && cmf >> 4 <= 7 && (cmf << 8 | flg) % 31 == 0
    }

    /// `bytes` compressed as one stream of `format` at `level`.
    ///
    /// - Throws: ``CompressionError/Code/compressionFailed``.
    package static func compress(_ bytes: [UInt8], format: Format, level: Int32 = defaultLevel)
        throws(CompressionError) -> [UInt8]
    {
        guard bytes.count <= Int(UInt32.max) else {
            throw CompressionError(.compressionFailed, "zlib: input of \(bytes.count) bytes is too large")
        }
        var stream = z_stream()
        let initStatus = deflateInit2_(
            &stream, level, Z_DEFLATED, format.windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size))
        guard initStatus == Z_OK else {
            throw CompressionError(.compressionFailed, "zlib: deflateInit2 returned \(initStatus)")
        }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count))) + 32
        var status: Int32 = Z_OK
        let output = [UInt8](unsafeUninitializedCapacity: bound) { out, count in
            bytes.withUnsafeBufferPointer { input in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(bound)
                status = deflate(&stream, Z_FINISH)
            }
            count = status == Z_STREAM_END ? bound - Int(stream.avail_out) : 0
        }
        guard status == Z_STREAM_END else {
            throw CompressionError(.compressionFailed, "zlib: deflate did not finish (\(status))")
        }
        return output
    }

    /// Decompresses one stream of `format` (several members for gzip), producing at most
    /// `maxOutputBytes`; the output buffer grows in steps and never beyond `maxOutputBytes + 1`.
    ///
    /// - Throws: ``CompressionError`` with `decompressionFailed`, `decompressedTooLarge`,
    ///   `trailingBytes` or `truncatedStream`.
    package static func decompress(_ input: [UInt8], format: Format, maxOutputBytes: Int) throws(CompressionError)
        -> [UInt8]
    {
        let maxOutputBytes = max(maxOutputBytes, 0)
        return try CompressionContextPool.shared.withInflateStream(windowBits: format.windowBits) {
            stream throws(CompressionError) in
            try BoundedOutputBuffer.decoding(input, maxBytes: maxOutputBytes) { raw, output throws(CompressionError) in
                try inflate(raw, stream: stream, format: format, into: &output, maxOutputBytes: maxOutputBytes)
            }
        }
    }

    /// Runs inflate over the whole input; returns once the (last) stream's end marker was read.
    private static func inflate(
        _ raw: UnsafeRawBufferPointer, stream: UnsafeMutablePointer<z_stream>, format: Format,
        into output: inout BoundedOutputBuffer, maxOutputBytes: Int
    ) throws(CompressionError) {
        // avail_in is 32 bits wide: hand the input over in pieces.
        var offset = 0
        func refill() {
            let piece = min(raw.count - offset, Int(UInt32.max))
            stream.pointee.next_in = UnsafeMutablePointer(
                mutating: raw.baseAddress?.assumingMemoryBound(to: Bytef.self).advanced(by: offset))
            stream.pointee.avail_in = uInt(piece)
            offset += piece
        }
        refill()
        while true {
            if stream.pointee.avail_in == 0 && offset < raw.count {
                refill()
            }
            if output.isFull && !output.grow() {
                throw tooLarge(maxOutputBytes)
            }
            let status = output.fill { destination, space in
                let given = min(space, Int(UInt32.max))
                stream.pointee.next_out = destination
                stream.pointee.avail_out = uInt(given)
                let status = CZlib.inflate(stream, Z_NO_FLUSH)
                return (status, given - Int(stream.pointee.avail_out))
            }
            let inputLeft = Int(stream.pointee.avail_in) + (raw.count - offset)
            switch status {
            case Z_OK, Z_STREAM_END:
                if output.count > maxOutputBytes {
                    throw tooLarge(maxOutputBytes)
                }
                if status == Z_STREAM_END {
                    if inputLeft == 0 { return }
                    // Another gzip member may follow; anything else after the end is an error.
                    if format == .gzip, inputLeft >= 2, let next = stream.pointee.next_in, next[0] == 0x1F,
                        next[1] == 0x8B, inflateReset(stream) == Z_OK
                    {
                        continue
                    }
                    throw CompressionError(.trailingBytes, "zlib: \(inputLeft) bytes follow the stream")
                }
            case Z_BUF_ERROR where inputLeft == 0:
                throw CompressionError(.truncatedStream, "zlib: stream ends before its end marker")
            case Z_NEED_DICT:
                throw CompressionError(.decompressionFailed, "zlib: preset dictionaries are not supported")
            default:
                throw CompressionError(.decompressionFailed, "zlib: \(message(status, stream.pointee.msg))")
            }
        }
    }

    private static func tooLarge(_ maxOutputBytes: Int) -> CompressionError {
        CompressionError(.decompressedTooLarge, "zlib: output exceeds \(maxOutputBytes) bytes")
    }

    /// Describes an inflate failure with zlib's own static message (never payload bytes).
    private static func message(_ status: Int32, _ detail: UnsafeMutablePointer<CChar>?) -> String {
        if let detail {
            return "\(String(cString: detail)) (status \(status))"
        }
        switch status {
        case Z_DATA_ERROR: return "invalid or corrupt stream (Z_DATA_ERROR)"
        case Z_MEM_ERROR: return "out of memory (Z_MEM_ERROR)"
        case Z_STREAM_ERROR: return "inconsistent stream state (Z_STREAM_ERROR)"
        case Z_BUF_ERROR: return "no progress possible (Z_BUF_ERROR)"
        default: return "inflate returned \(status)"
        }
    }
}
