import PulseJSON

/// One stack frame of a crash report, innermost first. Every field is nullable; symbolication fills
/// in what the device could not.
///
/// Wire keys in canonical order: `module`, `imageUuid`, `address` (hex string such as
/// `"0x1a2b3c"`), `imageOffset` (int64, offset of the address from the image's load address),
/// `symbol`, `file`, `line`.
public struct CrashFrame: Sendable, Hashable, Codable, PulseJSONCodable {
    /// The binary image (module) name.
    public var module: String?
    /// The image's UUID, used to find its symbols.
    public var imageUuid: String?
    /// The instruction address as a hex string.
    public var address: String?
    /// The address relative to the image's load address.
    public var imageOffset: Int64?
    /// The symbol name, if symbolicated on the device.
    public var symbol: String?
    /// The source file, if known.
    public var file: String?
    /// The source line, if known.
    public var line: Int?

    /// Creates a frame.
    public init(
        module: String? = nil, imageUuid: String? = nil, address: String? = nil, imageOffset: Int64? = nil,
        symbol: String? = nil, file: String? = nil, line: Int? = nil
    ) {
        self.module = module
        self.imageUuid = imageUuid
        self.address = address
        self.imageOffset = imageOffset
        self.symbol = symbol
        self.file = file
        self.line = line
    }

    enum CodingKeys: String, CodingKey {
        case module, imageUuid, address, imageOffset, symbol, file, line
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        module = try c.decodeIfPresent(String.self, forKey: .module)
        imageUuid = try c.decodeIfPresent(String.self, forKey: .imageUuid)
        address = try c.decodeIfPresent(String.self, forKey: .address)
        imageOffset = try c.decodeIfPresent(Int64.self, forKey: .imageOffset)
        symbol = try c.decodeIfPresent(String.self, forKey: .symbol)
        file = try c.decodeIfPresent(String.self, forKey: .file)
        line = try c.decodeIfPresent(Int.self, forKey: .line)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeNullable(module, forKey: .module)
        try c.encodeNullable(imageUuid, forKey: .imageUuid)
        try c.encodeNullable(address, forKey: .address)
        try c.encodeNullable(imageOffset, forKey: .imageOffset)
        try c.encodeNullable(symbol, forKey: .symbol)
        try c.encodeNullable(file, forKey: .file)
        try c.encodeNullable(line, forKey: .line)
    }

    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        let o = try JSONObjectReader(node)
        module = try o.optionalString("module")
        imageUuid = try o.optionalString("imageUuid")
        address = try o.optionalString("address")
        imageOffset = try o.optionalInt64("imageOffset")
        symbol = try o.optionalString("symbol")
        file = try o.optionalString("file")
        line = try o.optionalInt("line")
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("module", module)
        writer.field("imageUuid", imageUuid)
        writer.field("address", address)
        writer.field("imageOffset", imageOffset)
        writer.field("symbol", symbol)
        writer.field("file", file)
        writer.field("line", line)
        writer.endObject()
    }
}
