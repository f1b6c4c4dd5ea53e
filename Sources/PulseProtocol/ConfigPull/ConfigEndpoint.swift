import PulseJSON

/// One named endpoint in a configuration snapshot, for example
/// `{"name":"ingest","url":"tcp://127.0.0.1:6000"}`.
///
/// Both fields are required. Names are free-form; PulseGate uses `ingest` (msgtrans events and
/// crashes) and `crash` (a separate crash queue, when present).
public struct ConfigEndpoint: Sendable, Hashable, Codable {
    /// The endpoint's role.
    public var name: String
    /// Where to reach it (`tcp://host:port` for msgtrans).
    public var url: String

    /// Creates an endpoint.
    public init(name: String, url: String) {
        self.name = name
        self.url = url
    }

    /// The member names an endpoint defines (see ``ConfigSnapshot/memberNames``).
    public static let memberNames = Set(CodingKeys.allCases.map(\.rawValue))

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, url
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        url = try c.decode(String.self, forKey: .url)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(url, forKey: .url)
    }
}

extension ConfigEndpoint: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        ConfigEndpoint(name: "", url: ""),
        .required("name", \.name), .required("url", \.url))
}
