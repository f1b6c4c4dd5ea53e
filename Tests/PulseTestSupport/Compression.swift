import CZlib
import CZstd

/// Compressors for building test bodies (the module under test only decompresses).
package enum Compression {
    package enum ZlibFormat {
        case gzip
        case zlib
        case raw

        var windowBits: Int32 {
            switch self {
            case .gzip: return 15 + 16
            case .zlib: return 15
            case .raw: return -15
            }
        }
    }

    package static func deflate(_ input: [UInt8], format: ZlibFormat, level: Int32 = 6) -> [UInt8] {
        var stream = z_stream()
        let status = deflateInit2_(
            &stream, level, Z_DEFLATED, format.windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK)
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 64)
        var input = input
        let produced = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer -> Int in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                precondition(CZlib.deflate(&stream, Z_FINISH) == Z_STREAM_END)
                return outBuffer.count - Int(stream.avail_out)
            }
        }
        return Array(output[..<produced])
    }

    package static func zstd(_ input: [UInt8], level: Int32 = 3) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        let size = input.withUnsafeBytes { inBuffer in
            output.withUnsafeMutableBytes { outBuffer in
                ZSTD_compress(outBuffer.baseAddress, outBuffer.count, inBuffer.baseAddress, inBuffer.count, level)
            }
        }
        precondition(ZSTD_isError(size) == 0)
        return Array(output[..<size])
    }

    /// A zstd frame produced by the streaming API with no declared content size.
    package static func zstdStreaming(_ input: [UInt8], level: Int32 = 3) -> [UInt8] {
        let context = ZSTD_createCCtx()!
        defer { ZSTD_freeCCtx(context) }
        ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: ZSTD_CStreamOutSize())
        input.withUnsafeBytes { inBytes in
            var source = ZSTD_inBuffer(src: inBytes.baseAddress, size: inBytes.count, pos: 0)
            while true {
                let (remaining, produced) = chunk.withUnsafeMutableBytes { out -> (Int, Int) in
                    var destination = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                    let remaining = ZSTD_compressStream2(context, &destination, &source, ZSTD_e_end)
                    return (remaining, destination.pos)
                }
                output += chunk[..<produced]
                if remaining == 0 { break }
            }
        }
        return output
    }
}
