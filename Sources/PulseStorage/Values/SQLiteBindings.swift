import CSQLite
import PulseKit

/// The `?` parameters of one statement, bound in order straight into SQLite, one call per value.
///
/// Handed to the closure of ``SQLiteConnection/execute(_:binding:)``; valid only inside it (it is
/// non-copyable, so it cannot escape). Unlike a `[(any SQLiteBindable)?]` array, nothing is boxed
/// per value: each `bind` goes directly to `sqlite3_bind_*`, which is what a hot insert loop wants.
/// Text is copied, before `bind` returns, into an arena of the statement's run (one allocation for
/// all of its values instead of one per value by SQLite; its first block is the connection's,
/// kept from run to run), which lives until SQLite has dropped its bindings; blobs are copied by
/// SQLite.
///
/// ```swift
/// try connection.execute("INSERT INTO event(id, body, crash) VALUES (?, ?, ?)") { row in
///     try row.bind(id)
///     try row.bindText(utf8: bodyBytes)   // bytes already known to be UTF-8, stored as TEXT
///     try row.bind(crashId)               // String?: nil binds NULL
/// }
/// ```
///
/// After the closure returns, binding fewer or more values than the statement has parameters is a
/// ``StorageError/Code/misuse`` error and the statement does not run.
package struct SQLiteBindings: ~Copyable {
    let handle: OpaquePointer
    let database: OpaquePointer
    let sql: String
    let parameterCount: Int32
    /// Parameters bound so far (the next one is `bound + 1`).
    private(set) var bound: Int32 = 0
    /// Blocks holding the bound text; SQLite points into them (`SQLITE_STATIC`) until the
    /// statement is reset and its bindings cleared, then ``deallocateArena()`` frees them.
    private var blocks: [UnsafeMutableRawBufferPointer] = []
    private var used = 0
    /// A block of ``blockBytes`` lent by the connection, used before any other, or `nil`.
    private var spare: UnsafeMutableRawBufferPointer?
    /// The size of an arena block (larger texts get a block of their own size).
    static let blockBytes = 16 << 10

    /// `spare`, a block of ``blockBytes`` or `nil`, becomes the arena's first block; ``takeArena()``
    /// hands a block of that size back.
    init(handle: OpaquePointer, database: OpaquePointer, sql: String, spare: UnsafeMutableRawBufferPointer? = nil) {
        self.handle = handle
        self.database = database
        self.sql = sql
        self.spare = spare
        parameterCount = sqlite3_bind_parameter_count(handle)
    }

    /// Binds an integer.
    package mutating func bind(_ value: Int64) throws {
        let position = try next()
        try check(sqlite3_bind_int64(handle, position, value), position)
    }

    /// Binds an integer.
    package mutating func bind(_ value: Int) throws {
        try bind(Int64(value))
    }

    /// Binds a double.
    package mutating func bind(_ value: Double) throws {
        let position = try next()
        try check(sqlite3_bind_double(handle, position, value), position)
    }

    /// Binds text (embedded NUL characters are kept).
    package mutating func bind(_ value: String) throws {
        let done: Void? = try value.utf8.withContiguousStorageIfAvailable { utf8 in
            try bindText(utf8: UnsafeRawBufferPointer(utf8))
        }
        if done == nil {
            var text = value
            try text.withUTF8 { utf8 in try bindText(utf8: UnsafeRawBufferPointer(utf8)) }
        }
    }

    /// Binds text, or `NULL` for `nil`.
    package mutating func bind(_ value: String?) throws {
        if let value { try bind(value) } else { try bindNull() }
    }

    /// Binds an integer, or `NULL` for `nil`.
    package mutating func bind(_ value: Int64?) throws {
        if let value { try bind(value) } else { try bindNull() }
    }

    /// Binds `NULL`.
    package mutating func bindNull() throws {
        let position = try next()
        try check(sqlite3_bind_null(handle, position), position)
    }

    /// Binds bytes the caller knows to be valid UTF-8 as `TEXT` (no `String` is created; SQLite
    /// does not validate them, so invalid UTF-8 would be stored as it is).
    package mutating func bindText(utf8 bytes: ArraySlice<UInt8>) throws {
        try bytes.withUnsafeBytes { raw in try bindText(utf8: raw) }
    }

    /// Binds bytes the caller knows to be valid UTF-8 as `TEXT`; see ``bindText(utf8:)-(ArraySlice<UInt8>)``.
    package mutating func bindText(utf8 raw: UnsafeRawBufferPointer) throws {
        let position = try next()
        guard let base = raw.baseAddress, raw.count > 0 else {
            // Empty text: a zero-length string stays TEXT (a NULL pointer would bind NULL).
            try check(sqlite3_bind_text(handle, position, "", 0, transientDestructor), position)
            return
        }
        let copy = reserve(raw.count)
        copy.copyMemory(from: base, byteCount: raw.count)
        let code = sqlite3_bind_text64(
            handle, position, copy.assumingMemoryBound(to: CChar.self), sqlite3_uint64(raw.count), nil,
            UInt8(SQLITE_UTF8))
        try check(code, position)
    }

    /// `count` bytes of the arena, valid until ``deallocateArena()``.
    private mutating func reserve(_ count: Int) -> UnsafeMutableRawPointer {
        if let last = blocks.last, last.count - used >= count {
            defer { used += count }
            return last.baseAddress! + used
        }
        if blocks.isEmpty, let spare, spare.count >= count {
            self.spare = nil
            blocks.append(spare)
            used = count
            return spare.baseAddress!
        }
        let block = UnsafeMutableRawBufferPointer.allocate(
            byteCount: max(count, Self.blockBytes), alignment: MemoryLayout<UInt64>.alignment)
        blocks.append(block)
        used = count
        return block.baseAddress!
    }

    /// Empties the text arena and returns one block of ``blockBytes`` (the lent one, or one it
    /// allocated; `nil` when it has none) for the connection to lend to its next run; frees the
    /// others. Only after SQLite dropped the bindings (statement reset and
    /// `sqlite3_clear_bindings`), which ``SQLiteConnection`` does before calling this.
    mutating func takeArena() -> UnsafeMutableRawBufferPointer? {
        var kept = spare
        for block in blocks {
            if kept == nil && block.count == Self.blockBytes {
                kept = block
            } else {
                block.deallocate()
            }
        }
        spare = nil
        blocks.removeAll()
        used = 0
        return kept
    }

    /// Binds `values` in order, `nil` as `NULL`; `values.count` must be the parameter count.
    mutating func bind(contentsOf values: [(any SQLiteBindable)?]) throws {
        guard values.count == Int(parameterCount) else {
            throw StorageError(
                .misuse,
                "statement expects \(parameterCount) bindings, got \(values.count)"
                    + " — in `\(StorageError.abbreviated(sql))`")
        }
        for value in values {
            try bind(value?.sqliteValue ?? .null)
        }
    }

    /// Binds a blob (an empty one stays a zero-length `BLOB`, not `NULL`).
    package mutating func bind(_ bytes: [UInt8]) throws {
        let position = try next()
        if bytes.isEmpty {
            try check(sqlite3_bind_zeroblob(handle, position, 0), position)
            return
        }
        let code = bytes.withUnsafeBytes { raw in
            sqlite3_bind_blob64(handle, position, raw.baseAddress, sqlite3_uint64(raw.count), transientDestructor)
        }
        try check(code, position)
    }

    /// Binds a blob, or `NULL` for `nil`.
    package mutating func bind(_ bytes: [UInt8]?) throws {
        if let bytes { try bind(bytes) } else { try bindNull() }
    }

    /// Binds a value of any storage class.
    package mutating func bind(_ value: SQLiteValue) throws {
        switch value {
        case .null: try bindNull()
        case .integer(let integer): try bind(integer)
        case .real(let real): try bind(real)
        case .text(let text): try bind(text)
        case .blob(let bytes): try bind(bytes)
        }
    }

    /// Throws unless exactly as many values were bound as the statement has parameters.
    func checkComplete() throws {
        guard bound == parameterCount else {
            throw StorageError(
                .misuse,
                "statement expects \(parameterCount) bindings, got \(bound)"
                    + " — in `\(StorageError.abbreviated(sql))`")
        }
    }

    private mutating func next() throws -> Int32 {
        guard bound < parameterCount else {
            throw StorageError(
                .misuse,
                "statement expects \(parameterCount) bindings, got more"
                    + " — in `\(StorageError.abbreviated(sql))`")
        }
        bound += 1
        return bound
    }

    private func check(_ resultCode: Int32, _ position: Int32) throws {
        guard resultCode == SQLITE_OK else {
            throw StorageError(
                resultCode: resultCode, database: database, context: "bind parameter \(position)", sql: sql)
        }
    }
}

/// `SQLITE_TRANSIENT`: SQLite makes its own copy of bound text and blobs before the bind call returns.
let transientDestructor = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
