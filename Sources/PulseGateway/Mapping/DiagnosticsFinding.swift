import PulseJSON

/// Where the mapping walk found the request's first diagnostics record
/// (``DiagnosticsObservation/recordName``; `docs/diagnostics.md`), which
/// ``DiagnosticsObservation`` reads after the walk.
struct DiagnosticsFinding {
    /// The resource entry holding the record (`resourceLogs[i]` …).
    var resource: JSONNode
    /// The record's attributes (`null` when the record has a `null` list).
    var attributes: JSONNode

    /// Where the walk is in the request's search for the record: the first record of a scope
    /// that has the record's name decides the scope (when it has no attributes member, the
    /// scope holds no diagnostics record; a later scope may).
    struct Search {
        var found: DiagnosticsFinding?
        var scopeDecided = false

        /// Notes the record `attributes` of `resource` (cursors of `document`) when it is the first
        /// named record of its scope.
        mutating func named(_ attributes: JSONCursor?, resource: JSONCursor, of document: JSONNode) {
            guard found == nil, !scopeDecided else { return }
            scopeDecided = true
            if let attributes {
                found = DiagnosticsFinding(
                    resource: JSONNode(inDocumentOf: document, at: resource),
                    attributes: JSONNode(inDocumentOf: document, at: attributes))
            }
        }

        /// A new scope starts.
        mutating func nextScope() { scopeDecided = false }
    }
}
