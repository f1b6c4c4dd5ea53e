import PulseJSON

/// `CLIENT_CONFIG_PULL` (biz type 3) request: the client's applied revision and its capabilities.
///
/// Wire keys in canonical order: `configRevision` (int64, 0 when the client has never applied a
/// snapshot; default 0), `capabilities` (array of strings, default `[]`).
public struct ConfigPullRequest: Sendable, Hashable {
    /// The revision of the snapshot the client currently applies; 0 for none.
    public var configRevision: Int64
    /// The client's capability tokens, the same vocabulary as ``ConnectRequest/capabilities``.
    public var capabilities: [String]

    /// Creates a request.
    public init(configRevision: Int64 = 0, capabilities: [String] = []) {
        self.configRevision = configRevision
        self.capabilities = capabilities
    }

    /// The code a server answers this request with when its current snapshot is `snapshot`:
    /// - 409 when the client claims a revision newer than the server's (the client must reset to
    ///   revision 0 and pull again once);
    /// - 403 when the client lacks one of the snapshot's ``ConfigSnapshot/requiredCapabilities``
    ///   (retrying cannot help until policy or client changes);
    /// - 0 otherwise, with the complete snapshot as data (also when the revisions are equal).
    public func responseCode(serving snapshot: ConfigSnapshot) -> PulseResponseCode {
        if configRevision > snapshot.revision {
            return .conflict
        }
        let offered = Set(capabilities)
        if !snapshot.requiredCapabilities.allSatisfy(offered.contains) {
            return .forbidden
        }
        return .ok
    }
}

extension ConfigPullRequest: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        ConfigPullRequest(),
        .defaulted("configRevision", \.configRevision), .defaulted("capabilities", \.capabilities))
}
