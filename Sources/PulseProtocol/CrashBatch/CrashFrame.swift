import PulseJSON

/// One stack frame of a crash report, innermost first. Every field is nullable; symbolication fills
/// in what the device could not.
///
/// Wire keys in canonical order: `module`, `imageUuid`, `address` (hex string such as
/// `"0x1a2b3c"`), `imageOffset` (int64, offset of the address from the image's load address),
/// `symbol`, `file`, `line`.
public struct CrashFrame: Sendable, Hashable {
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
}

extension CrashFrame: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        CrashFrame(),
        .nullable("module", \.module), .nullable("imageUuid", \.imageUuid), .nullable("address", \.address),
        .nullable("imageOffset", \.imageOffset), .nullable("symbol", \.symbol), .nullable("file", \.file),
        .nullable("line", \.line))
}
