import OTLPProtobuf
import PulseHTTP
import PulseJSON
import PulseProtocol

/// Attribute lists written as the open attributes object (redacted), with what the rules read.
extension ResourceMapper {
    /// Writes the record's attributes (redacted) as members of the open attributes object and
    /// returns what the rules need; checks each attribute's JSON types as it goes (the caller
    /// checked that `list` is an array, or `null`).
    mutating func writeAttributes(_ list: JSONCursor?) throws(MappingProblem) -> RecordScan {
        guard let list else { return RecordScan() }
        // The attributes as one run of the writer's (the scan is the run's result, not captured:
        // a captured one is copied in and out).
        return try attributes.withRun { (run) throws(MappingProblem) -> RecordScan in
            var scan = RecordScan()
            for attribute in list.elements {
                let (key, value) = try MappingWalk.keyValue(attribute)
                // The key is read as the bytes the document holds: its role, whether it is sensitive
                // (no key with a role is, ``RecordScan/role(_:)``).
                guard let key,
                    let (role, sensitive) = key.withUTF8({ bytes in
                        let role = RecordScan.role(bytes)
                        return (role, role == nil && Redaction.isSensitive(utf8: bytes))
                    })
                else {
                    try MappingWalk.check(skipped: value, .anyValue)
                    continue
                }
                var isURL = false
                if let role {
                    switch role {
                    case .dropped:
                        try MappingWalk.check(skipped: value, .anyValue)
                        continue
                    case .url, .network(url: true): isURL = true
                    default: break
                    }
                    scan.observe(role, value)
                }
                _ = key.withUTF8 { run.key(utf8: $0) }
                if sensitive {
                    run.string(Redaction.placeholder)
                    try MappingWalk.check(skipped: value, .anyValue)
                } else if isURL, let url = value?["stringValue"], url.kind == .string {
                    Self.writeStrippedURL(url, into: &run)
                    try MappingWalk.check(skipped: value, .anyValue)
                } else {
                    try AnyValue.write(value, into: &run)
                }
            }
            return scan
        }
    }

    /// Writes the string `url` without its query string and fragment (``Redaction``), straight
    /// from the document's bytes when they are ASCII.
    private static func writeStrippedURL(_ url: JSONCursor, into run: inout JSONWriter.Run) {
        let written = url.withUTF8 { bytes -> Bool in
            guard let stripped = Redaction.strippingQueryAndFragment(ascii: bytes) else { return false }
            run.string(utf8: stripped)
            return true
        }
        if written != true, let text = url.string {
            run.string(Redaction.strippingQueryAndFragment(text))
        }
    }

    /// Writes `key` and the id string `id` in lower case, when `id` is a non-empty string: its
    /// ASCII letters lowered byte by byte (the type checks let only hex digits through), other
    /// text as `String.lowercased()` has it.
    mutating func writeLowercasedID(_ key: StaticString, _ id: JSONCursor?) {
        guard let id, let count = id.withUTF8({ $0.count }), count > 0 else { return }
        attributes.key(verbatim: key)
        let written = id.withUTF8 { bytes -> Bool in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return false }
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { lowered in
                for (offset, byte) in bytes.enumerated() {
                    lowered[offset] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                }
                attributes.string(utf8: UnsafeBufferPointer(lowered))
            }
            return true
        }
        if written != true, let text = id.string { attributes.string(text.lowercased()) }
    }

    /// Starts the attributes object of a record with the record's attributes (``writeAttributes(_:)``).
    mutating func beginAttributes(_ list: JSONCursor?) throws(MappingProblem) -> RecordScan {
        attributes.reset()
        attributes.beginObject()
        return try writeAttributes(list)
    }

    /// The resource's attributes as one object (for metric ids); the resource was checked whole
    /// as the walk passed it.
    mutating func encodeResourceAttributes(_ entry: JSONCursor) throws(MappingProblem) -> [UInt8] {
        _ = try beginAttributes(entry["resource"]?["attributes"])
        attributes.endObject()
        return attributes.bytes
    }

    /// Adds the clock fields and returns the event timestamp for a device time.
    mutating func timestamp(deviceTime: Int64?) -> Int64 {
        guard let deviceTime else { return context.receivedAt }
        guard let clockOffset else { return deviceTime }
        attributes.withRun { run in
            run.key(verbatim: "pulsegate.clock_offset_ms")
            run.int(clockOffset)
            run.key(verbatim: "pulsegate.device_time_ms")
            run.int(deviceTime)
        }
        return deviceTime + clockOffset
    }

    func kind(override: String?, resourceIndex: Int) throws(MappingProblem) -> PulseEventKind? {
        guard let override else { return nil }
        guard let kind = PulseEventKind(rawValue: override) else {
            throw .rejected(
                IntakeRejection(
                    .badRequest,
                    "resource \(resourceIndex): apsio.event.kind \"\(override.prefix(40))\" is not one of Analytics, Crash,"
                        + " Error, Log, Network, Performance, Runtime, Breadcrumb"))
        }
        return kind
    }
}
