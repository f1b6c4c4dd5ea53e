import MsgTrans

/// Deterministic plaintexts for fixtures and tests.
enum Payloads {
    /// A realistic first CLIENT_CONNECT request of exactly 327 bytes.
    static let connectRequest =
        #"{"protocolVersion":2,"appId":"app_3f9a2c7d","deviceId":"9b2e4f6a8c0d1e3f5a7b9c1d2e4f6a8b","#
        + #""installationId":"4c6e8a0b2d4f6a8c0e2a4c6e8b0d2f4a","platform":"ios","deviceType":"iPhone15,2","#
        + #""packageName":"com.acme.shop","appVersion":"4.2.1","buildNumber":4210,"sdkVersion":"1.8.0","#
        + #""capabilities":["batch_upload","compression:zstd"]}"#

    /// A realistic CLIENT_CONNECT success response of exactly 185 bytes.
    static let connectResponse =
        #"{"code":0,"msg":null,"data":{"connected":true,"protocolVersion":2,"connectionId":"c7f3a9","#
        + #""serverTimeMs":1764421997000,"configRevision":0,"heartbeatIntervalMs":60000,"collectKinds":[]}}"#

    /// A CLIENT_HEARTBEAT request.
    static let heartbeat = #"{"connectionId":"c7f3a9","clientTimeMs":1764422057000,"sdkVersion":"1.8.0"}"#

    /// SplitMix64: small, deterministic, good enough for test data.
    struct Generator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }

        mutating func hex(_ count: Int) -> String {
            let digits = Array("0123456789abcdef")
            return String((0..<count).map { _ in digits[Int(next() & 0xF)] })
        }

        mutating func below(_ bound: Int) -> Int {
            Int(next() % UInt64(bound))
        }
    }

    /// `count` lower-case letters from a seeded generator.
    static func filler(count: Int, seed: UInt64) -> [UInt8] {
        var generator = Generator(state: seed)
        return (0..<count).map { _ in UInt8(ascii: "a") + UInt8(generator.below(26)) }
    }

    /// A CLIENT_EVENT_BATCH_UPLOAD payload with `eventCount` events; `padding` hex characters are
    /// added to the last event's attributes to tune the size.
    static func eventBatch(eventCount: Int, padding: Int) -> [UInt8] {
        var random = Generator(state: 0x5055_4C53_45)
        let kinds = ["Analytics", "Crash", "Error", "Log", "Network", "Performance", "Runtime", "Breadcrumb"]
        let names = ["screen_view", "add_to_cart", "http_request", "app_start", "tap", "purchase", "frame_drop"]
        let screens = ["home", "catalog", "product", "cart", "checkout", "settings"]
        let session = random.hex(32)
        var events: [String] = []
        for index in 0..<eventCount {
            var attributes =
                #"{"screen":"\#(screens[random.below(screens.count)])","durationMs":\#(random.below(5000)),"#
                + #""ok":\#(random.below(10) > 0),"seq":\#(index)"#
            if index == eventCount - 1 && padding > 0 {
                attributes += #","trace":"\#(random.hex(padding))""#
            }
            attributes += "}"
            let module = index % 3 == 0 ? "null" : #""ShopKit""#
            events.append(
                #"{"id":"\#(random.hex(32))","timestamp":\#(1_764_421_997_000 + index * 1375),"#
                    + #""sessionId":"\#(session)","kind":"\#(kinds[index % kinds.count])","#
                    + #""name":"\#(names[random.below(names.count)])","#
                    + #""source":{"module":\#(module),"imageUuid":null},"attributes":\#(attributes)}"#)
        }
        let identity =
            #"{"projectId":"app_3f9a2c7d","installationId":"4c6e8a0b2d4f6a8c0e2a4c6e8b0d2f4a","#
            + #""deviceId":"9b2e4f6a8c0d1e3f5a7b9c1d2e4f6a8b","userId":null,"appVersion":"4.2.1","#
            + #""buildNumber":4210,"sdkVersion":"1.8.0","platform":"ios","packageName":"com.acme.shop"}"#
        let batch =
            #"{"identity":\#(identity),"events":[\#(events.joined(separator: ","))],"#
            + #""batchId":"\#(random.hex(32))"}"#
        return Array(batch.utf8)
    }

    /// Searches for an event batch whose zstd level-3 frame is exactly `target` bytes.
    static func eventBatchCompressingTo(_ target: Int) throws -> (plaintext: [UInt8], compressed: [UInt8]) {
        for eventCount in stride(from: 64, through: 1, by: -1) {
            for padding in 0..<2048 {
                let plaintext = eventBatch(eventCount: eventCount, padding: padding)
                let compressed = try PayloadCompressor.compress(plaintext, with: .zstd)
                if compressed.count == target {
                    return (plaintext, compressed)
                }
                if compressed.count > target {
                    break
                }
            }
        }
        fatalError("no event batch compresses to exactly \(target) bytes")
    }

    /// Rewrites a multi-segment zstd frame so that it no longer declares its content size.
    ///
    /// Frame header descriptor (byte 4): bits 7-6 content size field size, bit 5 single segment,
    /// bit 2 checksum, bits 1-0 dictionary id size. With single segment off, clearing bits 7-6
    /// and deleting the size field leaves a valid frame of unknown content size.
    static func removingContentSize(_ frame: [UInt8]) -> [UInt8] {
        let descriptor = frame[4]
        precondition(descriptor & 0x20 == 0, "single-segment frames need their content size")
        precondition(descriptor & 0x03 == 0, "frames with a dictionary id are not handled")
        let sizeFieldLength = [0, 2, 4, 8][Int(descriptor >> 6)]
        var result = Array(frame[0..<4])
        result.append(descriptor & 0x3F)
        result.append(frame[5])  // window descriptor
        result.append(contentsOf: frame[(6 + sizeFieldLength)...])
        return result
    }
}
