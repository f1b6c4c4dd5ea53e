import PulseJSON

/// The record attributes the rules look at, collected while the attributes are written.
struct RecordScan {
    var logRecordUID: String?
    var crashID: String?
    var eventName: String?
    var kindOverride: String?
    var exceptionType: String?
    var exceptionMessage: String?
    var exceptionStacktrace: String?
    var crashSignal: String?
    var sessionID: String?
    var buildID: String?
    var imageUUIDs: [String] = []
    var networkMarker = false
    /// An `event.name` attribute names the diagnostics record (``DiagnosticsObservation/recordName``).
    var namesDiagnosticsRecord = false

    /// What an attribute key means to the mapping (one ``KeyTable`` lookup per key, ``role(_:)``).
    enum Role {
        case logRecordUID, crashID, eventName, kindOverride, exceptionType, exceptionMessage, exceptionStacktrace
        case crashSignal, sessionID, buildID, imageUUIDs
        /// Marks a span as network; URL ones also lose their query and fragment.
        case network(url: Bool)
        /// A URL attribute that is not a network marker.
        case url
        /// Dropped entirely (`url.query`, `url.fragment`).
        case dropped
    }

    private static let roles: [String: Role] = {
        var roles: [String: Role] = [
            "log.record.uid": .logRecordUID, "app.crash.id": .crashID, "event.name": .eventName,
            "apsio.event.kind": .kindOverride, "exception.type": .exceptionType,
            "exception.message": .exceptionMessage, "exception.stacktrace": .exceptionStacktrace,
            "app.crash.signal": .crashSignal, "session.id": .sessionID, "app.build_id": .buildID,
            "app.crash.image_uuids": .imageUUIDs,
        ]
        for key in ["http.request.method", "http.method", "rpc.system", "db.system"] {
            roles[key] = .network(url: false)
        }
        for key in Redaction.urlKeys { roles[key] = .url }
        for key in ["url.full", "http.url"] { roles[key] = .network(url: true) }
        for key in Redaction.droppedKeys { roles[key] = .dropped }
        return roles
    }()

    /// ``roles``' keys and, by key index, their roles.
    private static let roleTable: (keys: KeyTable, roles: [Role]) = {
        let pairs = Array(roles)
        precondition(pairs.allSatisfy { !Redaction.isSensitive($0.key) }, "a key with a role is never redacted")
        return (KeyTable(pairs.map(\.key)), pairs.map(\.value))
    }()

    /// What the attribute key `key` (UTF-8) means to the mapping, `nil` for any other key; no key
    /// with a role is sensitive (``Redaction/isSensitive(utf8:)``), so its scan is not needed.
    static func role(_ key: UnsafeBufferPointer<UInt8>) -> Role? {
        roleTable.keys.index(key).map { roleTable.roles[$0] }
    }

    /// Notes `value` for `role`.
    mutating func observe(_ role: Role, _ value: JSONCursor?) {
        switch role {
        case .logRecordUID: logRecordUID = logRecordUID ?? AnyValue.string(value)
        case .crashID: crashID = crashID ?? AnyValue.string(value)
        case .eventName:
            let name = AnyValue.string(value)
            eventName = eventName ?? name
            if name == DiagnosticsObservation.recordName { namesDiagnosticsRecord = true }
        case .kindOverride: kindOverride = kindOverride ?? AnyValue.string(value)
        case .exceptionType: exceptionType = exceptionType ?? AnyValue.string(value)
        case .exceptionMessage: exceptionMessage = exceptionMessage ?? AnyValue.string(value)
        case .exceptionStacktrace: exceptionStacktrace = exceptionStacktrace ?? AnyValue.string(value)
        case .crashSignal: crashSignal = crashSignal ?? AnyValue.string(value)
        case .sessionID: sessionID = sessionID ?? AnyValue.string(value)
        case .buildID: buildID = buildID ?? AnyValue.string(value)
        case .imageUUIDs:
            if let values = value?["arrayValue"]?["values"] {
                for element in values.elements {
                    if let text = AnyValue.string(element) { imageUUIDs.append(text) }
                }
            }
        case .network: networkMarker = true
        case .url, .dropped: break
        }
    }
}
