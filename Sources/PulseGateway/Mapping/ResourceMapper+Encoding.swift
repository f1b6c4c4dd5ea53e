import PulseHashing
import PulseJSON
import PulseKit
import PulseProtocol

/// Pulse events, crash reports and derived ids.
extension ResourceMapper {
    /// A Pulse event with the current attributes object, appended to `items`.
    func encodeEvent(
        id: String, timestamp: Int64, sessionID: String, kind: PulseEventKind, name: String, module: String?,
        imageUUID: String?, into items: inout EncodedItems
    ) {
        let attributes = attributes
        items.append {
            $0.pulseEvent(
                id: id, timestamp: timestamp, sessionId: sessionID, kind: kind, name: name, module: module,
                imageUuid: imageUUID
            ) { $0.raw(attributes) }
        }
    }

    /// A crash report (`CrashReport` of `docs/wire-protocol.md` §7.4) with the current attributes,
    /// appended to `items`.
    func encodeCrash(
        crashID: String, timestamp: Int64, sessionID: String?, scan: RecordScan, body: JSONCursor?,
        identity: ResolvedIdentity, into items: inout EncodedItems
    ) {
        var imageUUIDs = scan.imageUUIDs
        if imageUUIDs.isEmpty, let build = scan.buildID ?? identity.buildID, Int64(build) == nil {
            imageUUIDs = [build]
        }
        let build = CrashBuild(
            appVersion: identity.appVersion, buildNumber: identity.buildNumber, imageUuids: imageUUIDs,
            osVersion: identity.osVersion, architecture: identity.architecture)
        let attributes = attributes
        items.append { writer in
            writer.pulseCrashReport(
                crashId: crashID, timestamp: timestamp, sessionId: sessionID, signal: scan.crashSignal,
                exceptionType: scan.exceptionType, message: scan.exceptionMessage ?? body?["stringValue"]?.string,
                // The OTLP stack trace is one string (`exception.stacktrace`), not frames.
                stack: { writer in
                    if let stack = scan.exceptionStacktrace { writer.string(stack) } else { writer.null() }
                }, build: build, attachments: { _ in }, attributes: { $0.raw(attributes) })
        }
    }

    // MARK: - Ids

    /// SHA-256 of (app id, batch id, resource index, scope index, record index); a conflicting
    /// batch adds `conflict` and its body hash after the batch id.
    func derivedID(_ position: (Int, Int, Int)) -> String {
        var hasher = SHA256()
        hasher.updateField(context.appID)
        context.updateBatchFields(&hasher)
        hasher.updateField(String(position.0))
        hasher.updateField(String(position.1))
        hasher.updateField(String(position.2))
        return Hex.encode(hasher.finalize())
    }

    /// An id as it arrived, or its SHA-256 when longer than 128 characters.
    static func fitted(_ id: String) -> String {
        id.utf8.count <= 128 ? id : SHA256.hexDigest(Array(id.utf8))
    }
}
