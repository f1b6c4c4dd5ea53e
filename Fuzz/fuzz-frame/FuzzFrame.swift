// libFuzzer entry point for the msgtrans frame codec. Build and run with `scripts/fuzz.sh fuzz-frame <seconds>`.
//
// Each input is decoded twice, once appended whole and once in input-derived chunks, and the two
// results must agree. Every decoded frame must re-encode to exactly the bytes it was cut from, and
// its payload is decompressed under small limits. Any broken invariant traps, which libFuzzer
// reports as a crash.

import MsgTrans

/// Small limits keep each execution fast and make the limit checks reachable.
private let limits = FrameLimits(
    maxPayloadBytes: 1 << 16, maxExtensionHeaderBytes: 256, maxDecompressedBytes: 1 << 18)

/// Plaintexts up to this size are also re-compressed to check the round trip.
private let roundTripMaxBytes = 16 << 10

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))

    let whole = decode(input) { _ in input.count }
    var chunker = Chunker(input)
    let chunked = decode(input) { _ in chunker.next() }
    check(whole == chunked, "chunking changed the decoding result")

    for frame in whole.frames {
        checkPayload(of: frame)
    }

    // The decompressors on their own, on the raw input.
    for codec in [Compression.zstd, .zlib] {
        if let plaintext = try? PayloadCompressor.decompress(
            input, with: codec, maxOutputBytes: limits.maxDecompressedBytes)
        {
            check(plaintext.count <= limits.maxDecompressedBytes, "\(codec) output exceeds its bound")
        }
    }
    return 0
}

/// The observable result of decoding one input.
private struct Outcome: Equatable {
    var frames: [Frame] = []
    var errorCode: MsgTransError.Code?
    var consumed = 0
}

/// Feeds `input` through a ``FrameDecoder`` in chunks of `chunkSize(remaining)` bytes, draining
/// frames after every append, and checks the decoder's bookkeeping on the way.
private func decode(_ input: [UInt8], chunkSize: (Int) -> Int) -> Outcome {
    var decoder = FrameDecoder(limits: limits)
    var outcome = Outcome()
    var offset = 0
    var useRawAppend = false
    feeding: while offset < input.count {
        let count = max(1, min(chunkSize(input.count - offset), input.count - offset))
        if useRawAppend {
            input[offset..<offset + count].withUnsafeBytes { decoder.append($0) }
        } else {
            decoder.append(Array(input[offset..<offset + count]))
        }
        useRawAppend.toggle()
        offset += count
        do {
            while let frame = try decoder.next() {
                let encoded = frame.encoded()
                check(encoded.count <= input.count - outcome.consumed, "frame longer than its input")
                check(
                    encoded[...] == input[outcome.consumed..<outcome.consumed + encoded.count],
                    "re-encoding differs from the consumed bytes")
                check(frame.payload.count <= limits.maxPayloadBytes, "payload over the limit")
                check(frame.extensionHeader.count <= limits.maxExtensionHeaderBytes, "extension over the limit")
                outcome.consumed += encoded.count
                outcome.frames.append(frame)
            }
        } catch {
            check(error.isConnectionFatal, "decoder threw a non-fatal error")
            outcome.errorCode = error.code
            checkHeaderError(error, input: input, at: outcome.consumed)
            // Errors are sticky.
            let again = Result { () throws(MsgTransError) in try decoder.next() }
            check(again.failureCode == error.code, "decoder error is not sticky")
            return outcome
        }
        check(decoder.bufferedByteCount == offset - outcome.consumed, "bufferedByteCount is wrong")
    }
    let finished = Result { () throws(MsgTransError) in try decoder.finish() }
    if outcome.consumed == input.count {
        check(finished.failureCode == nil, "finish() failed on a complete stream")
    } else {
        check(finished.failureCode == .incompleteFrame, "finish() accepted an incomplete stream")
        // What remains is an incomplete frame with a valid header (if the header is there).
        let rest = Array(input[outcome.consumed...])
        if rest.count >= FrameHeader.size {
            let header = Result { () throws(MsgTransError) in try FrameHeader(decoding: rest, limits: limits) }
            check(header.failureCode == nil, "decoder waited on an invalid header")
            if case .success(let header) = header {
                check(header.frameLength > rest.count, "decoder waited on a complete frame")
            }
        }
    }
    return outcome
}

/// A framing error must be explained by the 16 bytes at `offset` alone.
private func checkHeaderError(_ error: MsgTransError, input: [UInt8], at offset: Int) {
    check(input.count - offset >= FrameHeader.size, "header error before 16 bytes arrived")
    let header = Array(input[offset..<offset + FrameHeader.size])
    let reparsed = Result { () throws(MsgTransError) in try FrameHeader(decoding: header, limits: limits) }
    check(reparsed.failureCode == error.code, "header error not reproducible from the header alone")
}

/// Decompresses a decoded frame and checks what comes out.
private func checkPayload(of frame: Frame) {
    let result = Result { () throws(MsgTransError) in try frame.plaintext(limits: limits) }
    switch result {
    case .failure(let error):
        check(frame.compression != .none, "an uncompressed payload failed to decode")
        check(!error.isConnectionFatal, "a payload error was marked connection-fatal")
    case .success(let plaintext):
        if frame.compression == .none {
            check(plaintext == frame.payload, "uncompressed plaintext differs from the payload")
            return
        }
        check(plaintext.count <= limits.maxDecompressedBytes, "plaintext exceeds maxDecompressedBytes")
        guard plaintext.count <= roundTripMaxBytes else { return }
        let policy = CompressionPolicy(compressionMinBytes: 0)
        let remade = Result { () throws(MsgTransError) in
            try Frame.make(
                packetType: frame.packetType, bizType: frame.bizType, messageID: frame.messageID,
                plaintext: plaintext, preferred: frame.compression, policy: policy)
        }
        guard case .success(let remadeFrame) = remade else {
            check(false, "re-compressing a plaintext failed")
            return
        }
        check(remadeFrame.compression == frame.compression, "make() changed the codec")
        let again = Result { () throws(MsgTransError) in try remadeFrame.plaintext(limits: limits) }
        check(again.successValue == plaintext, "compression round trip changed the plaintext")
    }
}

/// Chunk sizes derived from the input itself (xorshift seeded by its length and first bytes).
private struct Chunker {
    private var state: UInt64

    init(_ input: [UInt8]) {
        var seed = UInt64(input.count) &* 0x9E37_79B9_7F4A_7C15 | 1
        for byte in input.prefix(8) {
            seed = (seed << 8 | seed >> 56) ^ UInt64(byte)
        }
        state = seed == 0 ? 1 : seed
    }

    mutating func next() -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        // Mostly tiny chunks (header boundaries), sometimes large ones.
        let bound = state & 3 == 0 ? 4096 : 24
        return 1 + Int((state >> 8) % UInt64(bound))
    }
}

extension Result where Failure == MsgTransError {
    fileprivate var failureCode: MsgTransError.Code? {
        if case .failure(let error) = self {
            return error.code
        }
        return nil
    }

    fileprivate var successValue: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}

/// Traps with `message` when an invariant does not hold (kept in release builds).
private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fatalError("fuzz-frame invariant violated: \(message())")
    }
}
