import CZlib

/// Streaming, bounded zlib inflation for the gzip, zlib and raw deflate formats.
enum ZlibInflater {
    enum Format {
        /// RFC 1952; concatenated members are decoded one after another.
        case gzip
        /// RFC 1950.
        case zlib
        /// RFC 1951, no wrapper.
        case raw

        var windowBits: Int32 {
            switch self {
            case .gzip: return 15 + 16
            case .zlib: return 15
            case .raw: return -15
            }
        }
    }

    static let chunkSize = 64 * 1024

    /// Whether `data` starts with a valid RFC 1950 header (method 8, window ≤ 32 KiB, check bits).
    static func hasZlibHeader(_ data: [UInt8]) -> Bool {
        guard data.count >= 2 else { return false }
        let cmf = Int(data[0])
        let flg = Int(data[1])
        return cmf & 0x0F == 8 && cmf >> 4 <= 7 && (cmf << 8 | flg) % 31 == 0
    }

    static func inflate(_ input: [UInt8], format: Format, maxOutputBytes: Int) throws(HTTPServerError) -> [UInt8] {
        guard input.count <= Int(UInt32.max) else {
            throw HTTPServerError(.bodyTooLarge, "compressed body is larger than 4 GiB")
        }
        var stream = z_stream()
        guard inflateInit2_(&stream, format.windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else {
            throw HTTPServerError(.malformedBody, "zlib could not be initialised")
        }
        defer { inflateEnd(&stream) }
        var output = DecodedOutput(limit: maxOutputBytes, expected: input.count * 4)
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        let result: Result<Void, HTTPServerError> = input.withUnsafeBufferPointer { inputBuffer in
            stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            stream.avail_in = UInt32(inputBuffer.count)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return (status, out.count - Int(stream.avail_out))
                }
                let fits = chunk.withUnsafeBytes { output.append(UnsafeRawBufferPointer(rebasing: $0[..<produced])) }
                if !fits { return .failure(output.tooLarge) }
                switch status {
                case Z_OK:
                    continue
                case Z_STREAM_END:
                    if stream.avail_in == 0 { return .success(()) }
                    // Another gzip member may follow; anything else after the end is an error.
                    let next = inputBuffer.count - Int(stream.avail_in)
                    if format == .gzip, inputBuffer.count - next >= 2, inputBuffer[next] == 0x1F,
                        inputBuffer[next + 1] == 0x8B, inflateReset(&stream) == Z_OK
                    {
                        continue
                    }
                    return .failure(HTTPServerError(.malformedBody, "data after the end of the compressed stream"))
                case Z_BUF_ERROR:
                    return .failure(HTTPServerError(.malformedBody, "compressed body is truncated"))
                default:
                    return .failure(HTTPServerError(.malformedBody, "compressed body is corrupt"))
                }
            }
        }
        try result.get()
        return output.bytes
    }
}
