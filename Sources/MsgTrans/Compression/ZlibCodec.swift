import CZlib

/// zlib (RFC 1950) through libz: one-shot compression, bounded streaming decompression.
enum ZlibCodec {
    static let defaultLevel: Int32 = Z_DEFAULT_COMPRESSION

    static func compress(_ bytes: [UInt8], level: Int32) throws(MsgTransError) -> [UInt8] {
        var outputLength = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(outputLength))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                compress2(out.baseAddress, &outputLength, input.baseAddress, uLong(input.count), level)
            }
        }
        guard status == Z_OK else {
            throw MsgTransError(.compressionFailed, "zlib: compress2 returned \(status)")
        }
        output.removeSubrange(Int(outputLength)...)
        return output
    }

    static func decompress(_ input: [UInt8], maxOutputBytes: Int) throws(MsgTransError) -> [UInt8] {
        try DecompressionContextPool.shared.withZlibStream { stream throws(MsgTransError) in
            try BoundedOutputBuffer.decoding(input, maxBytes: maxOutputBytes) { raw, output throws(MsgTransError) in
                try inflate(raw, stream: stream, into: &output, maxOutputBytes: maxOutputBytes)
            }
        }
    }

    /// Runs inflate over the whole input; returns once the stream's end marker has been read.
    private static func inflate(
        _ raw: UnsafeRawBufferPointer, stream: UnsafeMutablePointer<z_stream>,
        into output: inout BoundedOutputBuffer, maxOutputBytes: Int
    ) throws(MsgTransError) {
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
                    if inputLeft > 0 {
                        throw MsgTransError(.trailingBytes, "zlib: \(inputLeft) bytes follow the stream")
                    }
                    return
                }
            case Z_BUF_ERROR where inputLeft == 0:
                throw MsgTransError(.truncatedStream, "zlib: stream ends before its end marker")
            case Z_NEED_DICT:
                throw MsgTransError(.decompressionFailed, "zlib: preset dictionaries are not supported")
            default:
                throw MsgTransError(.decompressionFailed, "zlib: \(message(status, stream.pointee.msg))")
            }
        }
    }

    private static func tooLarge(_ maxOutputBytes: Int) -> MsgTransError {
        MsgTransError(.decompressedTooLarge, "zlib: output exceeds \(maxOutputBytes) bytes")
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
