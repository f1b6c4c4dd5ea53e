import CZstd

/// Streaming, bounded zstd decompression.
enum ZstdDecompressor {
    /// 2^23 = 8 MiB, the window RFC 8878 asks HTTP decoders to support at most.
    static let windowLogMax: Int32 = 23

    static func decompress(_ input: [UInt8], maxOutputBytes: Int) throws(HTTPServerError) -> [UInt8] {
        guard !input.isEmpty else { throw HTTPServerError(.malformedBody, "empty zstd body") }
        guard let context = ZSTD_createDCtx() else {
            throw HTTPServerError(.malformedBody, "zstd could not be initialised")
        }
        defer { ZSTD_freeDCtx(context) }
        _ = ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, windowLogMax)
        var output = DecodedOutput(limit: maxOutputBytes, expected: input.count * 4)
        var chunk = [UInt8](repeating: 0, count: ZSTD_DStreamOutSize())
        let result: Result<Void, HTTPServerError> = input.withUnsafeBytes { inputBytes in
            var source = ZSTD_inBuffer(src: inputBytes.baseAddress, size: inputBytes.count, pos: 0)
            while true {
                let (status, produced, filled) = chunk.withUnsafeMutableBytes { out -> (Int, Int, Bool) in
                    var destination = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                    let status = ZSTD_decompressStream(context, &destination, &source)
                    return (status, destination.pos, destination.pos == destination.size)
                }
                if ZSTD_isError(status) != 0 {
                    return .failure(
                        HTTPServerError(.malformedBody, "zstd body is corrupt or needs a window over 8 MiB"))
                }
                let fits = chunk.withUnsafeBytes { output.append(UnsafeRawBufferPointer(rebasing: $0[..<produced])) }
                if !fits { return .failure(output.tooLarge) }
                let inputDone = source.pos == source.size
                if status == 0 && inputDone { return .success(()) }
                if inputDone && !filled {
                    return .failure(HTTPServerError(.malformedBody, "zstd body is truncated"))
                }
            }
        }
        try result.get()
        return output.bytes
    }
}
