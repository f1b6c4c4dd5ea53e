import PulseJSON
public import PulseKit

/// `CLIENT_CONFIG_PULL` (biz type 3) success data: a complete, versioned policy snapshot.
///
/// A snapshot is always complete (never a delta) and a client applies it atomically: it validates the
/// whole snapshot first (``validate()``; the decoders do this) and then replaces its policy in one
/// step, or keeps the previous policy if anything is invalid.
///
/// Wire keys in canonical order, with the default used when a key is absent: `revision` (required),
/// `killSwitch` (false), `maxBatchAgeMs` (604800000, 7 days), `queueByteCap` (8388608),
/// `sealIntervalMs` (15000), `batchMaxEvents` (64), `batchMaxBytes` (65536), `compression` ("zstd"),
/// `compressionMinBytes` (1024), `sampling` ({} = every kind at 1.0), `diagnosticsLevel`
/// ("batchSummaries"), `collectKinds` ([] = all), `requiredCapabilities` ([]), `endpoints` ([]).
public struct ConfigSnapshot: Sendable, Hashable, Codable {
    /// The snapshot's revision; strictly increasing on the server, never 0 for a real snapshot.
    public var revision: Int64
    /// When true the client stops collecting and drops its whole queue.
    public var killSwitch: Bool
    /// Batches older than this are dropped instead of sent.
    public var maxBatchAgeMs: Int64
    /// The on-disk queue's byte cap; the oldest batches go first (crash, exit and session summary
    /// records last).
    public var queueByteCap: Int64
    /// How long an open batch may stay unsealed in the foreground.
    public var sealIntervalMs: Int64
    /// The most events per `CLIENT_EVENT_BATCH_UPLOAD`.
    public var batchMaxEvents: Int
    /// The largest uncompressed event-batch envelope in bytes.
    public var batchMaxBytes: Int
    /// The codec for payloads of at least ``compressionMinBytes``.
    public var compression: PayloadCodec
    /// Payloads smaller than this are sent uncompressed.
    public var compressionMinBytes: Int
    /// Sampling rate per kind in 0...1; a kind not listed is sampled at 1.0.
    public var sampling: [PulseEventKind: Double]
    /// The SDK self-diagnostics level.
    public var diagnosticsLevel: DiagnosticsLevel
    /// The kinds to collect; empty means all.
    public var collectKinds: [PulseEventKind]
    /// Capabilities a client must have to apply this snapshot.
    public var requiredCapabilities: [String]
    /// Named endpoints, in order.
    public var endpoints: [ConfigEndpoint]

    /// 7 days.
    public static let defaultMaxBatchAgeMs: Int64 = 604_800_000
    /// 8 MiB.
    public static let defaultQueueByteCap: Int64 = 8_388_608
    /// 15 s.
    public static let defaultSealIntervalMs: Int64 = 15_000
    /// 64 events.
    public static let defaultBatchMaxEvents = 64
    /// 65,536 bytes.
    public static let defaultBatchMaxBytes = 65_536
    /// 1,024 bytes.
    public static let defaultCompressionMinBytes = 1_024

    /// Creates a snapshot; every policy field defaults to the contract default.
    public init(
        revision: Int64, killSwitch: Bool = false, maxBatchAgeMs: Int64 = ConfigSnapshot.defaultMaxBatchAgeMs,
        queueByteCap: Int64 = ConfigSnapshot.defaultQueueByteCap,
        sealIntervalMs: Int64 = ConfigSnapshot.defaultSealIntervalMs,
        batchMaxEvents: Int = ConfigSnapshot.defaultBatchMaxEvents,
        batchMaxBytes: Int = ConfigSnapshot.defaultBatchMaxBytes, compression: PayloadCodec = .zstd,
        compressionMinBytes: Int = ConfigSnapshot.defaultCompressionMinBytes, sampling: [PulseEventKind: Double] = [:],
        diagnosticsLevel: DiagnosticsLevel = .batchSummaries, collectKinds: [PulseEventKind] = [],
        requiredCapabilities: [String] = [], endpoints: [ConfigEndpoint] = []
    ) {
        self.revision = revision
        self.killSwitch = killSwitch
        self.maxBatchAgeMs = maxBatchAgeMs
        self.queueByteCap = queueByteCap
        self.sealIntervalMs = sealIntervalMs
        self.batchMaxEvents = batchMaxEvents
        self.batchMaxBytes = batchMaxBytes
        self.compression = compression
        self.compressionMinBytes = compressionMinBytes
        self.sampling = sampling
        self.diagnosticsLevel = diagnosticsLevel
        self.collectKinds = collectKinds
        self.requiredCapabilities = requiredCapabilities
        self.endpoints = endpoints
    }

    /// The sampling rate for `kind` (1.0 when the snapshot does not list it).
    public func samplingRate(for kind: PulseEventKind) -> Double {
        sampling[kind] ?? 1.0
    }

    /// Whether events of `kind` are collected at all under ``collectKinds`` and ``killSwitch``.
    public func collects(_ kind: PulseEventKind) -> Bool {
        !killSwitch && (collectKinds.isEmpty || collectKinds.contains(kind))
    }

    /// Checks the invariants a client relies on before applying the snapshot: non-negative revision,
    /// positive ages, caps and limits, non-negative ``compressionMinBytes`` and every sampling rate
    /// finite and within 0...1. Throws ``PulseProtocolError/Code/invalidValue`` naming the field.
    public func validate() throws(PulseProtocolError) {
        func check(_ condition: Bool, _ field: String, _ rule: String) throws(PulseProtocolError) {
            if !condition {
                throw PulseProtocolError(.invalidValue, "\(field): must be \(rule)")
            }
        }
        try check(revision >= 0, "revision", "non-negative")
        try check(maxBatchAgeMs > 0, "maxBatchAgeMs", "positive")
        try check(queueByteCap > 0, "queueByteCap", "positive")
        try check(sealIntervalMs > 0, "sealIntervalMs", "positive")
        try check(batchMaxEvents > 0, "batchMaxEvents", "positive")
        try check(batchMaxBytes > 0, "batchMaxBytes", "positive")
        try check(compressionMinBytes >= 0, "compressionMinBytes", "non-negative")
        for kind in PulseEventKind.allCases {
            if let rate = sampling[kind] {
                try check(rate.isFinite && rate >= 0 && rate <= 1, "sampling.\(kind.rawValue)", "within 0...1")
            }
        }
    }

    /// The member names a snapshot defines: a config file that holds a snapshot treats any other
    /// member as a mistake (the wire decoder skips unknown members, for newer peers).
    public static let memberNames = Set(CodingKeys.allCases.map(\.rawValue))

    enum CodingKeys: String, CodingKey, CaseIterable {
        case revision, killSwitch, maxBatchAgeMs, queueByteCap, sealIntervalMs, batchMaxEvents, batchMaxBytes
        case compression, compressionMinBytes, sampling, diagnosticsLevel, collectKinds, requiredCapabilities
        case endpoints
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        revision = try c.decode(Int64.self, forKey: .revision)
        killSwitch = try c.decode(Bool.self, forKey: .killSwitch, default: false)
        maxBatchAgeMs = try c.decode(Int64.self, forKey: .maxBatchAgeMs, default: Self.defaultMaxBatchAgeMs)
        queueByteCap = try c.decode(Int64.self, forKey: .queueByteCap, default: Self.defaultQueueByteCap)
        sealIntervalMs = try c.decode(Int64.self, forKey: .sealIntervalMs, default: Self.defaultSealIntervalMs)
        batchMaxEvents = try c.decode(Int.self, forKey: .batchMaxEvents, default: Self.defaultBatchMaxEvents)
        batchMaxBytes = try c.decode(Int.self, forKey: .batchMaxBytes, default: Self.defaultBatchMaxBytes)
        compression = try c.decode(PayloadCodec.self, forKey: .compression, default: .zstd)
        compressionMinBytes = try c.decode(
            Int.self, forKey: .compressionMinBytes, default: Self.defaultCompressionMinBytes)
        sampling = [:]
        if c.contains(.sampling), try !c.decodeNil(forKey: .sampling) {
            let rates = try c.nestedContainer(keyedBy: DynamicCodingKey.self, forKey: .sampling)
            for key in rates.allKeys {
                sampling[try PulseEventKind(wireValue: key.stringValue)] = try rates.decode(Double.self, forKey: key)
            }
        }
        diagnosticsLevel = try c.decode(DiagnosticsLevel.self, forKey: .diagnosticsLevel, default: .batchSummaries)
        collectKinds = try c.decode([PulseEventKind].self, forKey: .collectKinds, default: [])
        requiredCapabilities = try c.decode([String].self, forKey: .requiredCapabilities, default: [])
        endpoints = try c.decode([ConfigEndpoint].self, forKey: .endpoints, default: [])
        try validate()
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(revision, forKey: .revision)
        try c.encode(killSwitch, forKey: .killSwitch)
        try c.encode(maxBatchAgeMs, forKey: .maxBatchAgeMs)
        try c.encode(queueByteCap, forKey: .queueByteCap)
        try c.encode(sealIntervalMs, forKey: .sealIntervalMs)
        try c.encode(batchMaxEvents, forKey: .batchMaxEvents)
        try c.encode(batchMaxBytes, forKey: .batchMaxBytes)
        try c.encode(compression, forKey: .compression)
        try c.encode(compressionMinBytes, forKey: .compressionMinBytes)
        var rates = c.nestedContainer(keyedBy: DynamicCodingKey.self, forKey: .sampling)
        for kind in PulseEventKind.allCases {
            if let rate = sampling[kind] {
                try rates.encode(rate, forKey: DynamicCodingKey(kind.rawValue))
            }
        }
        try c.encode(diagnosticsLevel, forKey: .diagnosticsLevel)
        try c.encode(collectKinds, forKey: .collectKinds)
        try c.encode(requiredCapabilities, forKey: .requiredCapabilities)
        try c.encode(endpoints, forKey: .endpoints)
    }
}

extension ConfigSnapshot: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        ConfigSnapshot(revision: 0),
        .required("revision", \.revision), .defaulted("killSwitch", \.killSwitch),
        .defaulted("maxBatchAgeMs", \.maxBatchAgeMs), .defaulted("queueByteCap", \.queueByteCap),
        .defaulted("sealIntervalMs", \.sealIntervalMs), .defaulted("batchMaxEvents", \.batchMaxEvents),
        .defaulted("batchMaxBytes", \.batchMaxBytes), .defaulted("compression", \.compression),
        .defaulted("compressionMinBytes", \.compressionMinBytes), .defaulted("sampling", \.sampling),
        .defaulted("diagnosticsLevel", \.diagnosticsLevel), .defaulted("collectKinds", \.collectKinds),
        .defaulted("requiredCapabilities", \.requiredCapabilities), .defaulted("endpoints", \.endpoints),
        validate: { value throws(PulseProtocolError) in try value.validate() })
}

/// Sampling rates: an object of event kinds (unknown kinds rejected) to numbers, written in
/// ``PulseEventKind`` declaration order.
extension [PulseEventKind: Double]: WireReadable, WireWritable {
    init(wireNode node: JSONNode, nullable: Bool) throws(PulseProtocolError) {
        guard node.kind == .object else {
            throw .mismatch("an object")
        }
        self = [:]
        for (key, value) in node.memberNodes {
            let kind = try PulseEventKind(jsonNode: key, field: "$")
            guard let rate = value.double else {
                throw .mismatch("a number", at: "$.\(kind.rawValue)")
            }
            self[kind] = rate
        }
    }

    func writeWire(to writer: inout JSONWriter) {
        writer.beginObject()
        for kind in PulseEventKind.allCases {
            if let rate = self[kind] {
                writer.field(kind.rawValue, rate)
            }
        }
        writer.endObject()
    }
}
