/// The growable byte buffer behind ``JSONWriter``.
///
/// The writer keeps value semantics through copy-on-write: it calls ``isKnownUniquelyReferenced``
/// before every mutation and copies the buffer when it is shared, exactly like `Array`. A buffer
/// is therefore only ever mutated through a single writer value, which makes sharing it safe.
final class JSONOutputBuffer: @unchecked Sendable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    /// Bytes written.
    var count: Int
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
        count = 0
    }

    deinit {
        base.deallocate()
    }

    /// A copy with the same contents and capacity.
    func copy() -> JSONOutputBuffer {
        let copy = JSONOutputBuffer(capacity: capacity)
        copy.base.initialize(from: base, count: count)
        copy.count = count
        return copy
    }

    /// Room for at least `extra` more bytes; returns where they go. Advance ``count`` after writing.
    @inline(__always)
    func reserve(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        if capacity - count < extra { grow(to: count + extra) }
        return base + count
    }

    private func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1).pointee = byte
        count += 1
    }

    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    /// The bytes written, as an array.
    var array: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { buffer.baseAddress!.initialize(from: base, count: count) }
            initialized = count
        }
    }
}
