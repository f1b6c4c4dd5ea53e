/// Byte ranges of values inside a JSON text, so a caller can keep the bytes of a value exactly as
/// they were received instead of re-encoding what it decoded.
///
/// Meant for a text that ``JSONParser`` has already accepted: the scan relies on the text being
/// valid JSON and does no validation of its own (on anything else it gives an unspecified range
/// or `nil`, never a crash or an out-of-bounds range).
package enum JSONRawSpans {
    /// The byte ranges of the elements of the array that is the value of the root object's member
    /// `key`, in order (each range starts at the element's first byte and ends after its last;
    /// surrounding whitespace is excluded).
    ///
    /// `nil` when the root is not an object, the member is missing or is not an array, or a root
    /// member name is written with escapes (then the raw name cannot be compared byte for byte;
    /// callers fall back to re-encoding). With duplicate member names the first wins, as with
    /// ``JSONNode/subscript(_:)-(String)``.
    package static func arrayElements(ofMember key: String, in text: UnsafeRawBufferPointer) -> [Range<Int>]? {
        var scanner = Scanner(bytes: text.bindMemory(to: UInt8.self))
        let keyBytes = Array(key.utf8)
        return keyBytes.withUnsafeBufferPointer { scanner.arrayElements(ofMember: $0) }
    }

    /// ``arrayElements(ofMember:in:)-(_,UnsafeRawBufferPointer)`` over an array's bytes.
    package static func arrayElements(ofMember key: String, in text: [UInt8]) -> [Range<Int>]? {
        text.withUnsafeBytes { arrayElements(ofMember: key, in: $0) }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        mutating func arrayElements(ofMember key: UnsafeBufferPointer<UInt8>) -> [Range<Int>]? {
            skipWhitespace()
            guard take(UInt8(ascii: "{")) else { return nil }
            while true {
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
                guard let name = skipString(), !name.escaped else { return nil }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                if name.range.count == key.count && bytes.matches(key, at: name.range.lowerBound) {
                    return elements()
                }
                guard skipValue() else { return nil }
                skipWhitespace()
                guard take(UInt8(ascii: ",")) else { return nil }
            }
        }

        private mutating func elements() -> [Range<Int>]? {
            guard take(UInt8(ascii: "[")) else { return nil }
            var ranges: [Range<Int>] = []
            skipWhitespace()
            if take(UInt8(ascii: "]")) { return ranges }
            while true {
                skipWhitespace()
                let start = position
                guard skipValue() else { return nil }
                ranges.append(start..<position)
                skipWhitespace()
                if take(UInt8(ascii: "]")) { return ranges }
                guard take(UInt8(ascii: ",")) else { return nil }
            }
        }

        /// Skips one value; `false` at the end of the input.
        private mutating func skipValue() -> Bool {
            guard position < bytes.count else { return false }
            switch bytes[position] {
            case UInt8(ascii: "\""):
                return skipString() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while position < bytes.count {
                    switch bytes[position] {
                    case UInt8(ascii: "\""):
                        guard skipString() != nil else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            position += 1
                            return true
                        }
                    default:
                        break
                    }
                    position += 1
                }
                return false
            default:
                // A number, true, false or null: up to the next delimiter.
                while position < bytes.count {
                    switch bytes[position] {
                    case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D:
                        return true
                    default:
                        position += 1
                    }
                }
                return true
            }
        }

        /// Skips a string starting at its opening quote; returns the range of its contents and
        /// whether it contains an escape, or `nil` if it is not closed.
        private mutating func skipString() -> (range: Range<Int>, escaped: Bool)? {
            position += 1
            let start = position
            var escaped = false
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    let range = start..<position
                    position += 1
                    return (range, escaped)
                case UInt8(ascii: "\\"):
                    escaped = true
                    position += 2
                default:
                    position += 1
                }
            }
            return nil
        }

        private mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }
    }
}

extension UnsafeBufferPointer<UInt8> {
    fileprivate func matches(_ other: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        guard offset >= 0, offset + other.count <= count else { return false }
        for index in 0..<other.count where self[offset + index] != other[index] {
            return false
        }
        return true
    }
}
