/// Reads what ``CurlProcessTransfer``'s curl left: its exit status and the `--include` output (one header
/// block per response — interim 1xx blocks are skipped — then the body).
enum CurlResponseFile {
    /// The largest response body kept (as ``CurlTransport`` bounds it).
    static let maximumBodyBytes = 1 << 20

    /// The transfer's result: the response when curl exited 0 and it parses, else a failure naming curl's
    /// exit status.
    static func result(exitStatus: String, response: [UInt8]?) -> TransferResult {
        let status = Int(exitStatus.trimmingASCIIWhitespace())
        guard status == 0 else {
            return .failed(message: "curl exited with status \(status.map(String.init) ?? "?")\(meaning(status))")
        }
        guard let response, let parsed = parse(response) else {
            return .failed(message: "curl left no readable response")
        }
        return .response(parsed)
    }

    /// The final response in `bytes`, or `nil` if there is no complete header block.
    static func parse(_ bytes: [UInt8]) -> UploadResponse? {
        var start = 0
        while true {
            guard let end = headerEnd(bytes, from: start) else { return nil }
            // Split the bytes, not a String: "\r\n" is one Character.
            var lines = bytes[start..<end.head].split(separator: 0x0A, omittingEmptySubsequences: false).map {
                String(decoding: $0.last == 0x0D ? $0.dropLast() : $0, as: UTF8.self)
            }
            guard !lines.isEmpty else { return nil }
            let statusLine = lines.removeFirst().split(separator: " ")
            guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/"), let code = Int(statusLine[1]) else {
                return nil
            }
            if (100..<200).contains(code) {
                start = end.body
                continue
            }
            var headers: [String: String] = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[String(line[..<colon])] = String(line[line.index(after: colon)...]).trimmingASCIIWhitespace()
            }
            let body = Array(bytes[end.body...].prefix(maximumBodyBytes))
            return UploadResponse(status: code, headers: headers, body: body)
        }
    }

    /// The end of the header block starting at `start` (before its blank line) and where what follows begins.
    private static func headerEnd(_ bytes: [UInt8], from start: Int) -> (head: Int, body: Int)? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 0x0A {
                if bytes[index + 1] == 0x0A { return (index, index + 2) }
                if bytes[index + 1] == 0x0D, index + 2 < bytes.count, bytes[index + 2] == 0x0A {
                    return (index, index + 3)
                }
            }
            index += 1
        }
        return nil
    }

    private static func meaning(_ status: Int?) -> String {
        switch status {
        case 6: " (could not resolve the host)"
        case 7: " (could not connect: connection refused)"
        case 28: " (timed out)"
        case 52: " (empty reply)"
        case 55, 56: " (connection dropped)"
        default: ""
        }
    }
}
