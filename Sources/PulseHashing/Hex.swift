/// Lower-case hexadecimal encoding.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `bytes` as lower-case hex, two characters per byte.
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
