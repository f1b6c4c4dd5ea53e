import PulseProtocol

/// Where an effective ``UploadPolicy`` value comes from, highest precedence first.
///
/// 1. ``explicit``: set explicitly for this process (``UploaderConfiguration/explicitPolicy``; for
///    `pulsegate upload`, its command-line flags). What an operator typed for one run is the most specific
///    and shortest-lived intent, so a remote policy does not replace it.
/// 2. ``remote``: the gateway's policy (`GET /v1/policy`), for the values it carries (see `docs/policy.md`).
///    The fleet operator's choice beats the app's built-in one.
/// 3. ``configuration``: the app's ``UploaderConfiguration/policy`` (or ``Uploader/apply(policy:)``).
/// 4. ``default``: the documented default.
package enum PolicySource: String, Sendable, Equatable, CaseIterable {
    /// Set for this process (``UploaderConfiguration/explicitPolicy``, the command-line flags).
    case explicit
    /// From the gateway's policy.
    case remote
    /// From ``UploaderConfiguration/policy`` or ``Uploader/apply(policy:)``, differing from the default.
    case configuration
    /// The documented default.
    case `default`
}

/// One effective policy value and its source, as `pulsegate upload status` shows it.
package struct PolicySetting: Sendable, Equatable {
    /// The field's name (``UploadPolicy/Field/rawValue``).
    package var name: String
    /// The value, rendered as text (milliseconds and bytes as integers).
    package var value: String
    /// Where it comes from.
    package var source: PolicySource
}

extension UploadPolicy {
    /// The fields of a policy, by the names `docs/uploader.md` uses.
    public enum Field: String, Sendable, CaseIterable, Hashable {
        case sealIntervalMilliseconds, maximumBatchBytes, maximumBatchRecords, maximumAttachmentBytes
        case maximumQueueBytes, maximumQueueRecords, maximumBatchAgeMilliseconds, backoffBaseMilliseconds
        case backoffCapMilliseconds, maximumAttemptsPerWindow, attemptWindowMilliseconds, maximumInFlight
        case largeUploadBytes, leaseMilliseconds, authenticationHoldMilliseconds, encoding, killSwitch
        case diagnosticsLevel, sampling, collectKinds

        /// The fields a remote policy carries (see ``RemotePolicy``).
        static let remote: Set<Field> = [
            .killSwitch, .maximumBatchAgeMilliseconds, .maximumQueueBytes, .sealIntervalMilliseconds,
            .maximumBatchRecords, .maximumBatchBytes, .sampling, .diagnosticsLevel, .collectKinds,
        ]

        /// The field's value in `policy`, as text.
        func render(_ policy: UploadPolicy) -> String {
            switch self {
            case .sealIntervalMilliseconds: "\(policy.sealIntervalMilliseconds)"
            case .maximumBatchBytes: "\(policy.maximumBatchBytes)"
            case .maximumBatchRecords: "\(policy.maximumBatchRecords)"
            case .maximumAttachmentBytes: "\(policy.maximumAttachmentBytes)"
            case .maximumQueueBytes: "\(policy.maximumQueueBytes)"
            case .maximumQueueRecords: "\(policy.maximumQueueRecords)"
            case .maximumBatchAgeMilliseconds: "\(policy.maximumBatchAgeMilliseconds)"
            case .backoffBaseMilliseconds: "\(policy.backoffBaseMilliseconds)"
            case .backoffCapMilliseconds: "\(policy.backoffCapMilliseconds)"
            case .maximumAttemptsPerWindow: "\(policy.maximumAttemptsPerWindow)"
            case .attemptWindowMilliseconds: "\(policy.attemptWindowMilliseconds)"
            case .maximumInFlight: "\(policy.maximumInFlight)"
            case .largeUploadBytes: "\(policy.largeUploadBytes)"
            case .leaseMilliseconds: "\(policy.leaseMilliseconds)"
            case .authenticationHoldMilliseconds: "\(policy.authenticationHoldMilliseconds)"
            case .encoding: policy.encoding.rawValue
            case .killSwitch: "\(policy.killSwitch)"
            case .diagnosticsLevel: policy.diagnosticsLevel.rawValue
            case .sampling:
                policy.sampling.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue)=\($0.value)" }
                    .joined(separator: ",")
            case .collectKinds: policy.collectKinds.map(\.rawValue).sorted().joined(separator: ",")
            }
        }

        /// Copies the field's value from `source` into `policy`.
        func copy(from source: UploadPolicy, into policy: inout UploadPolicy) {
            switch self {
            case .sealIntervalMilliseconds: policy.sealIntervalMilliseconds = source.sealIntervalMilliseconds
            case .maximumBatchBytes: policy.maximumBatchBytes = source.maximumBatchBytes
            case .maximumBatchRecords: policy.maximumBatchRecords = source.maximumBatchRecords
            case .maximumAttachmentBytes: policy.maximumAttachmentBytes = source.maximumAttachmentBytes
            case .maximumQueueBytes: policy.maximumQueueBytes = source.maximumQueueBytes
            case .maximumQueueRecords: policy.maximumQueueRecords = source.maximumQueueRecords
            case .maximumBatchAgeMilliseconds: policy.maximumBatchAgeMilliseconds = source.maximumBatchAgeMilliseconds
            case .backoffBaseMilliseconds: policy.backoffBaseMilliseconds = source.backoffBaseMilliseconds
            case .backoffCapMilliseconds: policy.backoffCapMilliseconds = source.backoffCapMilliseconds
            case .maximumAttemptsPerWindow: policy.maximumAttemptsPerWindow = source.maximumAttemptsPerWindow
            case .attemptWindowMilliseconds: policy.attemptWindowMilliseconds = source.attemptWindowMilliseconds
            case .maximumInFlight: policy.maximumInFlight = source.maximumInFlight
            case .largeUploadBytes: policy.largeUploadBytes = source.largeUploadBytes
            case .leaseMilliseconds: policy.leaseMilliseconds = source.leaseMilliseconds
            case .authenticationHoldMilliseconds:
                policy.authenticationHoldMilliseconds = source.authenticationHoldMilliseconds
            case .encoding: policy.encoding = source.encoding
            case .killSwitch: policy.killSwitch = source.killSwitch
            case .diagnosticsLevel: policy.diagnosticsLevel = source.diagnosticsLevel
            case .sampling: policy.sampling = source.sampling
            case .collectKinds: policy.collectKinds = source.collectKinds
            }
        }
    }

    /// Each effective value of this policy with its source: `explicit` fields win, then the fields a remote
    /// policy carries when one is applied, then values that differ from `configured`'s defaults.
    func settings(configured: UploadPolicy, explicit: Set<Field>, remoteApplied: Bool) -> [PolicySetting] {
        let defaults = UploadPolicy()
        return Field.allCases.map { field in
            let source: PolicySource
            if explicit.contains(field) {
                source = .explicit
            } else if remoteApplied && Field.remote.contains(field) {
                source = .remote
            } else if field.render(configured) != field.render(defaults) {
                source = .configuration
            } else {
                source = .default
            }
            return PolicySetting(name: field.rawValue, value: field.render(self), source: source)
        }
    }
}
