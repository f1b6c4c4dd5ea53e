import PulseJSON

/// Deterministic sample documents for the JSON benchmark (no randomness, no clock).
enum SampleDocuments {
    /// A deterministic stream of 32-character lowercase hex ids (like the SDK's ids).
    struct HexIDs {
        private var state: UInt64

        init(seed: UInt64) { state = seed }

        mutating func next(length: Int = 32) -> String {
            let digits = Array("0123456789abcdef".utf8)
            var out: [UInt8] = []
            out.reserveCapacity(length)
            while out.count < length {
                // 64-bit LCG (Knuth's MMIX constants), high bits used.
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                var bits = state >> 8
                for _ in 0..<8 where out.count < length {
                    out.append(digits[Int(bits & 0xF)])
                    bits >>= 4
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// An OTLP/JSON `ExportLogsServiceRequest` with one resource, one scope and `records` log
    /// records (about 8.4 KiB for 20 records): attributes as `AnyValue`s, int64 values as decimal
    /// strings, trace and span ids as hex.
    static func otlpLogs(records: Int = 20) -> [UInt8] {
        var ids = HexIDs(seed: 0x0711)
        var w = JSONWriter(capacity: 16 << 10)
        func attribute(_ key: String, string: String) {
            w.beginObject()
            w.field("key", key)
            w.key("value")
            w.beginObject()
            w.field("stringValue", string)
            w.endObject()
            w.endObject()
        }
        func attribute(_ key: String, int: Int64) {
            w.beginObject()
            w.field("key", key)
            w.key("value")
            w.beginObject()
            w.field("intValue", String(int))
            w.endObject()
            w.endObject()
        }
        w.beginObject()
        w.key("resourceLogs")
        w.beginArray()
        w.beginObject()
        w.key("resource")
        w.beginObject()
        w.key("attributes")
        w.beginArray()
        attribute("service.name", string: "checkout-api")
        attribute("service.version", string: "2.14.1")
        attribute("host.name", string: "node-7.eu-west-1.internal")
        attribute("process.pid", int: 4_182)
        w.endArray()
        w.field("droppedAttributesCount", 0)
        w.endObject()
        w.key("scopeLogs")
        w.beginArray()
        w.beginObject()
        w.key("scope")
        w.beginObject()
        w.field("name", "com.example.checkout.http")
        w.field("version", "1.4.2")
        w.endObject()
        w.key("logRecords")
        w.beginArray()
        let routes = ["/v1/cart/{id}", "/v1/checkout", "/v1/items", "/v1/users/{id}/orders"]
        let methods = ["GET", "POST", "GET", "PUT"]
        for i in 0..<records {
            let time: Int64 = 1_700_000_000_000_000_000 + Int64(i) * 1_234_567_891
            let warn = i % 5 == 4
            w.beginObject()
            w.field("timeUnixNano", String(time))
            w.field("observedTimeUnixNano", String(time + 382_000))
            w.field("severityNumber", warn ? 13 : 9)
            w.field("severityText", warn ? "WARN" : "INFO")
            w.key("body")
            w.beginObject()
            w.field(
                "stringValue",
                "\(methods[i % 4]) \(routes[i % 4]) \(warn ? 503 : 200)")
            w.endObject()
            w.key("attributes")
            w.beginArray()
            attribute("http.method", string: methods[i % 4])
            attribute("http.status_code", int: warn ? 503 : 200)
            w.beginObject()
            w.field("key", "cache.hit")
            w.key("value")
            w.beginObject()
            w.field("boolValue", i % 3 == 0)
            w.endObject()
            w.endObject()
            w.endArray()
            w.field("traceId", ids.next())
            w.field("spanId", ids.next(length: 16))
            w.endObject()
        }
        w.endArray()
        w.field("schemaUrl", "https://opentelemetry.io/schemas/1.24.0")
        w.endObject()
        w.endArray()
        w.field("schemaUrl", "https://opentelemetry.io/schemas/1.24.0")
        w.endObject()
        w.endArray()
        w.endObject()
        return w.bytes
    }

    /// A Pulse `CLIENT_EVENT_BATCH_UPLOAD` payload with `events` events of every kind (about
    /// 33 KiB for 64 events), shaped per wire-reference.md section 2.
    static func pulseBatch(events: Int = 64) -> [UInt8] {
        var ids = HexIDs(seed: 0x9E37)
        let installation = ids.next()
        let session = ids.next()
        var w = JSONWriter(capacity: 48 << 10)
        w.beginObject()
        w.key("identity")
        w.beginObject()
        w.field("projectId", "app_4f1c2b9e")
        w.field("installationId", installation)
        w.field("deviceId", ids.next())
        w.field("userId", "user-184205")
        w.field("appVersion", "3.12.0")
        w.field("buildNumber", 31_200)
        w.field("sdkVersion", "pulsekit-2.3.1")
        w.field("platform", "ios")
        w.field("packageName", "com.example.shop")
        w.endObject()
        w.key("events")
        w.beginArray()
        let kinds = ["Analytics", "Network", "Log", "Performance", "Breadcrumb", "Error", "Runtime", "Crash"]
        let eventNames = [
            "product_viewed", "http.request", "app.log", "screen.render", "ui.tap", "error.caught",
            "runtime.memory_warning", "crash.signal",
        ]
        let screens = ["CartViewController", "CheckoutViewController", "ProductListViewController", "ProfileView"]
        for i in 0..<events {
            let kind = kinds[i % kinds.count]
            let screen = screens[i % screens.count]
            w.beginObject()
            w.field("id", ids.next())
            w.field("timestamp", 1_700_000_000_000 + i * 1_537)
            w.field("sessionId", session)
            w.field("kind", kind)
            w.field("name", eventNames[i % eventNames.count])
            w.key("source")
            w.beginObject()
            w.field("module", i % 7 == 6 ? nil : "ShopKit")
            w.field("imageUuid", i % 7 == 6 ? nil : "8D6C1F0E-3B7A-4C55-9E1D-2A4F6B8C0D1E")
            w.endObject()
            w.key("attributes")
            w.beginObject()
            w.field("screen", screen)
            w.field("thread", i % 2 == 0 ? "main" : "com.apple.network.connection-\(i)")
            w.field("seq", i)
            w.field("foreground", i % 4 != 3)
            w.field("appState", i % 4 != 3 ? "active" : "background")
            switch kind {
            case "Network":
                w.field("url", "https://api.example.com/v1/cart/\(1_000 + i)/items?include=prices&locale=en_US")
                w.field("method", "GET")
                w.field("status", 200)
                w.field("durationMs", 42.5 + Double(i) * 1.25)
                w.field("bytesReceived", 5_231 + i * 17)
                w.field("protocol", "h2")
            case "Log", "Breadcrumb":
                w.field("level", i % 3 == 0 ? "warning" : "info")
                w.field(
                    "message",
                    "User tapped \"Add to cart\" on item \(i) (price: 19.99 EUR)\nretrying\twith backoff after é/ü")
                w.field("category", "commerce.cart")
            case "Error", "Crash":
                w.field("domain", "NSURLErrorDomain")
                w.field("code", -1_009)
                w.field("reason", "The Internet connection appears to be offline.")
                w.key("stack")
                w.beginArray()
                for frame in 0..<4 {
                    w.string("\(frame) ShopKit 0x00000001045\(frame)3a8c CartService.sync() + \(frame * 36 + 12)")
                }
                w.endArray()
            case "Performance":
                w.field("renderMs", 16.5 + Double(i % 9) * 2.25)
                w.field("frames", 58 + i % 3)
                w.field("droppedFrames", i % 4)
                w.field("memoryMB", 182.75)
            default:
                w.field("productId", "SKU-\(10_000 + i)")
                w.field("price", 19.99)
                w.field("currency", "EUR")
                w.key("tags")
                w.beginArray()
                w.string("promo")
                w.string("summer-2024")
                w.endArray()
                w.field("experiment", JSONValue.null)
            }
            w.endObject()
            w.endObject()
        }
        w.endArray()
        w.field("batchId", ids.next())
        w.endObject()
        return w.bytes
    }
}
