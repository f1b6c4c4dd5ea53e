import CZlib
import CZstd

/// The `Content-Encoding` of a sealed batch, chosen when it is sealed and stored with it.
public enum BodyEncoding: String, Sendable, Equatable, CaseIterable {
    /// gzip (RFC 1952), which every OTLP/HTTP server must accept.
    case gzip
    /// zstd (RFC 8878), one frame at level 3.
    case zstd
}

/// One-shot compression and decompression of batch bodies.
enum BodyCompression {
    /// Compresses `input` with `encoding`.
    static func compress(_ input: [UInt8], encoding: BodyEncoding) throws(UploaderError) -> [UInt8] {
        switch encoding {
        case .gzip: return try gzip(input)
        case .zstd: return try zstd(input)
        }
    }

    /// Decompresses `input` (for tests and diagnostics); refuses output larger than `limit`.
    static func decompress(_ input: [UInt8], encoding: BodyEncoding, limit: Int = 64 << 20) throws(UploaderError)
        -> [UInt8]
    {
        switch encoding {
        case .gzip: return try gunzip(input, limit: limit)
        case .zstd: return try unzstd(input, limit: limit)
        }
    }

    private static func zstd(_ input: [UInt8]) throws(UploaderError) -> [UInt8] {
        let bound = ZSTD_compressBound(input.count)
        var output = [UInt8](repeating: 0, count: bound)
        let written = output.withUnsafeMutableBytes { out in
            input.withUnsafeBytes { source in
                ZSTD_compress(out.baseAddress, bound, source.baseAddress, input.count, 3)
            }
        }
        guard ZSTD_isError(written) == 0 else {
            throw UploaderError(.compression, "zstd compression failed: \(String(cString: ZSTD_getErrorName(written)))")
        }
        output.removeSubrange(written...)
        return output
    }

    private static func unzstd(_ input: [UInt8], limit: Int) throws(UploaderError) -> [UInt8] {
        guard let stream = ZSTD_createDStream() else {
            throw UploaderError(.compression, "zstd: cannot create a decompression stream")
        }
        defer { ZSTD_freeDStream(stream) }
        ZSTD_initDStream(stream)
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let failure: String? = input.withUnsafeBytes { source in
            var inBuffer = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
            while true {
                let capacity = chunk.count
                let (code, produced) = chunk.withUnsafeMutableBytes { out -> (Int, Int) in
                    var outBuffer = ZSTD_outBuffer(dst: out.baseAddress, size: capacity, pos: 0)
                    let code = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
                    return (code, outBuffer.pos)
                }
                if ZSTD_isError(code) != 0 {
                    return String(cString: ZSTD_getErrorName(code))
                }
                result.append(contentsOf: chunk[0..<produced])
                if result.count > limit {
                    return "output exceeds \(limit) bytes"
                }
                if code == 0 {
                    return inBuffer.pos == inBuffer.size ? nil : "trailing bytes after the frame"
                }
                if inBuffer.pos == inBuffer.size && produced < capacity {
                    return "truncated frame"
                }
            }
        }
        if let failure {
            throw UploaderError(.compression, "zstd: \(failure)")
        }
        return result
    }

    private static func gzip(_ input: [UInt8]) throws(UploaderError) -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 16 selects the gzip wrapper.
        var status = deflateInit2_(
            &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            throw UploaderError(.compression, "gzip: deflateInit2 failed (\(status))")
        }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var output = [UInt8](repeating: 0, count: bound + 32)
        let capacity = output.count
        var mutableInput = input
        let produced = mutableInput.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { out -> Int in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(capacity)
                status = deflate(&stream, Z_FINISH)
                return capacity - Int(stream.avail_out)
            }
        }
        guard status == Z_STREAM_END else {
            throw UploaderError(.compression, "gzip: deflate did not finish (\(status))")
        }
        output.removeSubrange(produced...)
        return output
    }

    private static func gunzip(_ input: [UInt8], limit: Int) throws(UploaderError) -> [UInt8] {
        var stream = z_stream()
        var status = inflateInit2_(&stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            throw UploaderError(.compression, "gzip: inflateInit2 failed (\(status))")
        }
        defer { inflateEnd(&stream) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var mutableInput = input
        let failure: String? = mutableInput.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            repeat {
                let capacity = chunk.count
                let produced = chunk.withUnsafeMutableBufferPointer { out -> Int in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(capacity)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return capacity - Int(stream.avail_out)
                }
                guard status == Z_OK || status == Z_STREAM_END else {
                    return "inflate failed (\(status))"
                }
                result.append(contentsOf: chunk[0..<produced])
                if result.count > limit {
                    return "output exceeds \(limit) bytes"
                }
                if status == Z_OK && produced == 0 && stream.avail_in == 0 {
                    return "truncated stream"
                }
            } while status != Z_STREAM_END
            return stream.avail_in == 0 ? nil : "trailing bytes after the stream"
        }
        if let failure {
            throw UploaderError(.compression, "gzip: \(failure)")
        }
        return result
    }
}
