import CSQLite

/// A compiled statement owned by one ``SQLiteConnection``.
///
/// Cached statements live as long as the connection; uncached ones are finalized right after use.
final class PreparedStatement {
    let handle: OpaquePointer
    let sql: String
    /// Set while the statement is being stepped, so a re-entrant use of the same SQL gets its own statement.
    var inUse = false
    /// Monotonic use stamp for least-recently-used eviction.
    var lastUse: UInt64 = 0
    private var finalized = false

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
    }

    /// Number of `?` parameters.
    var parameterCount: Int {
        Int(sqlite3_bind_parameter_count(handle))
    }

    /// Binds `values` positionally. The caller has already reset the statement.
    func bind(_ values: [(any SQLiteBindable)?], database: OpaquePointer) throws {
        guard values.count == parameterCount else {
            throw StorageError(
                code: .misuse,
                message: "statement expects \(parameterCount) bindings, got \(values.count)"
                    + " — in `\(StorageError.abbreviated(sql))`")
        }
        for (offset, value) in values.enumerated() {
            let position = Int32(offset + 1)
            let resultCode = bindOne(value?.sqliteValue ?? .null, at: position)
            guard resultCode == SQLITE_OK else {
                throw StorageError(
                    resultCode: resultCode, database: database, context: "bind parameter \(position)", sql: sql)
            }
        }
    }

    private func bindOne(_ value: SQLiteValue, at position: Int32) -> Int32 {
        switch value {
        case .null:
            return sqlite3_bind_null(handle, position)
        case .integer(let integer):
            return sqlite3_bind_int64(handle, position, integer)
        case .real(let real):
            return sqlite3_bind_double(handle, position, real)
        case .text(var text):
            // Explicit byte length: embedded NULs are kept. SQLite copies the bytes (transient destructor).
            return text.withUTF8 { utf8 in
                guard let base = utf8.baseAddress else {
                    // Empty text: bind a zero-length string, which stays TEXT (a NULL pointer would bind NULL).
                    return sqlite3_bind_text(handle, position, "", 0, transientDestructor)
                }
                return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { chars in
                    sqlite3_bind_text64(
                        handle, position, chars, sqlite3_uint64(utf8.count), transientDestructor, UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let bytes):
            if bytes.isEmpty {
                // A NULL data pointer would bind NULL; a zero-length blob must stay a BLOB.
                return sqlite3_bind_zeroblob(handle, position, 0)
            }
            return bytes.withUnsafeBytes { raw in
                sqlite3_bind_blob64(handle, position, raw.baseAddress, sqlite3_uint64(raw.count), transientDestructor)
            }
        }
    }

    /// Resets the statement and drops its bindings (also releases copies of large bound values).
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func finalize() {
        guard !finalized else { return }
        finalized = true
        sqlite3_finalize(handle)
    }

    deinit {
        finalize()
    }
}

/// `SQLITE_TRANSIENT`: SQLite makes its own copy of bound text and blobs before the bind call returns.
private let transientDestructor = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
