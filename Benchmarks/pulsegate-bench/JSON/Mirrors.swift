import PulseJSON
import PulseProtocol

// Codable mirror structs of the two sample documents: what a Foundation-based gateway would
// decode into. The PulseJSON paths build the same OTLP structs; for the Pulse batch they build
// the gateway's own model (`GatewayBatch`: attributes kept as ordered `[JSONMember]`, as
// PulseProtocol does, instead of a hashed dictionary). Both encoders encode `PulseBatch`.

/// Any JSON value, Codable the way a Foundation-based gateway would write it.
enum AnyJSON: Codable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([AnyJSON])
    case object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
        // Most attribute values are strings, so that is tried first (each failed `try?` throws).
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode([AnyJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: AnyJSON].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

// MARK: OTLP logs (subset of opentelemetry-proto's JSON mapping used by the sample)

struct OTLPExportLogsRequest: Codable, Equatable {
    var resourceLogs: [OTLPResourceLogs]
}

struct OTLPResourceLogs: Codable, Equatable {
    var resource: OTLPResource?
    var scopeLogs: [OTLPScopeLogs]
    var schemaUrl: String?
}

struct OTLPResource: Codable, Equatable {
    var attributes: [OTLPKeyValue]
    var droppedAttributesCount: Int64?
}

struct OTLPScopeLogs: Codable, Equatable {
    var scope: OTLPScope?
    var logRecords: [OTLPLogRecord]
    var schemaUrl: String?
}

struct OTLPScope: Codable, Equatable {
    var name: String?
    var version: String?
}

struct OTLPKeyValue: Codable, Equatable {
    var key: String
    var value: OTLPAnyValue
}

/// OTLP `AnyValue` (the sample uses only scalar variants); int64 travels as a decimal string.
struct OTLPAnyValue: Codable, Equatable {
    var stringValue: String?
    var intValue: String?
    var doubleValue: Double?
    var boolValue: Bool?
}

struct OTLPLogRecord: Codable, Equatable {
    var timeUnixNano: String?
    var observedTimeUnixNano: String?
    var severityNumber: Int?
    var severityText: String?
    var body: OTLPAnyValue?
    var attributes: [OTLPKeyValue]
    var droppedAttributesCount: Int64?
    var flags: Int64?
    var traceId: String?
    var spanId: String?
}

// MARK: Pulse CLIENT_EVENT_BATCH_UPLOAD

struct PulseBatch: Codable, Equatable {
    var identity: PulseIdentity
    var events: [PulseEvent<[String: AnyJSON]>]
    var batchId: String
}

struct PulseIdentity: Codable, Equatable {
    var projectId: String
    var installationId: String
    var deviceId: String
    var userId: String?
    var appVersion: String?
    var buildNumber: Int64
    var sdkVersion: String
    var platform: String
    var packageName: String?
}

/// One event record; the Codable mirror reads `attributes` as `[String: AnyJSON]`, the gateway's
/// model (``GatewayEvent``) as `[JSONMember]`. `kind` is PulseProtocol's own (Codable) kind.
struct PulseEvent<Attributes: Equatable>: Equatable {
    var id: String
    var timestamp: Int64
    var sessionId: String
    var kind: PulseEventKind
    var name: String
    var source: PulseSource
    var attributes: Attributes
}

extension PulseEvent: Codable where Attributes: Codable {}

struct PulseSource: Codable, Equatable {
    var module: String?
    var imageUuid: String?
}

// MARK: The gateway's model of an event batch (PulseJSON side)

struct GatewayBatch: Equatable {
    var identity: PulseIdentity
    var events: [GatewayEvent]
    var batchId: String

    /// The same batch in the Codable mirror's shape (for cross-checking, not timed).
    var mirror: PulseBatch {
        PulseBatch(
            identity: identity,
            events: events.map {
                PulseEvent(
                    id: $0.id, timestamp: $0.timestamp, sessionId: $0.sessionId, kind: $0.kind, name: $0.name,
                    source: $0.source, attributes: AnyJSON.members($0.attributes))
            },
            batchId: batchId)
    }
}

typealias GatewayEvent = PulseEvent<[JSONMember]>

extension AnyJSON {
    /// Converts a PulseJSON value the way the Codable mirror reads the same JSON (integral
    /// numbers become ints; duplicate keys keep the last value, as JSONDecoder does).
    init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .uint(let u): self = Int64(exactly: u).map(AnyJSON.int) ?? .double(Double(u))
        case .double(let d): self = Int64(exactly: d).map(AnyJSON.int) ?? .double(d)
        case .string(let s): self = .string(s)
        case .array(let elements): self = .array(elements.map(AnyJSON.init))
        case .object(let members): self = .object(AnyJSON.members(members))
        }
    }

    static func members(_ members: [JSONMember]) -> [String: AnyJSON] {
        var result: [String: AnyJSON] = [:]
        for member in members { result[member.key] = AnyJSON(member.value) }
        return result
    }
}
