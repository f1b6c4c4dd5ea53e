/// The length-prefixed concatenation the gateway hashes for derived ids (docs/mapping.md): each
/// field as its UTF-8 byte count (8 bytes, big-endian) followed by its bytes. Written here
/// independently of the gateway's `SHA256.updateField`, so tests check the documented rule.
package func lengthPrefixedFields(_ fields: [String]) -> [UInt8] {
    var bytes: [UInt8] = []
    for field in fields {
        let utf8 = Array(field.utf8)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: utf8.count >> shift))
        }
        bytes += utf8
    }
    return bytes
}
