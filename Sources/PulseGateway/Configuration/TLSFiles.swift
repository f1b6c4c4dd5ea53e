import Foundation
package import PulseHTTP
import PulseJSON
import PulseKit

/// The PEM files the HTTP intake serves HTTPS with (`--tls-cert`/`--tls-key`, config keys
/// `tlsCert`/`tlsKey`, environment `PULSEGATE_TLS_CERT`/`PULSEGATE_TLS_KEY`).
///
/// Both are read at start and again on SIGHUP (``RunningGateway/reloadTLS()``); a pair that
/// cannot be used is refused with a message naming the file and the reason, never key material.
package struct TLSFiles: Sendable, Equatable {
    /// The certificate chain: the server's certificate first, then intermediates.
    package var certificatePath: String
    /// The unencrypted private key of the first certificate.
    package var keyPath: String

    /// Creates the pair.
    package init(certificatePath: String, keyPath: String) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
    }

    /// Reads and checks both files.
    ///
    /// - Throws: ``GatewayError`` with `invalidConfiguration` naming the file (``problem()``).
    package func load() throws(GatewayError) -> TLSCredentials {
        switch read() {
        case .success(let credentials): return credentials
        case .failure(let problem): throw GatewayError.invalidConfiguration([problem.problem])
        }
    }

    /// What is wrong with the pair (the config key and the file named), or `nil` when it can be
    /// served.
    func problem() -> ConfigurationProblem? {
        if case .failure(let failure) = read() { return failure.problem }
        return nil
    }

    /// A problem as an `Error`, for `Result`.
    private struct Failure: Error {
        var problem: ConfigurationProblem
    }

    private func read() -> Result<TLSCredentials, Failure> {
        func file(_ key: String, _ path: String) -> Result<[UInt8], Failure> {
            do {
                return .success([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
            } catch {
                let reason = (error as NSError).localizedFailureReason ?? "unreadable"
                return .failure(Failure(problem: ConfigurationProblem(key, "cannot read \(path): \(reason)")))
            }
        }
        let certificate: [UInt8]
        let key: [UInt8]
        switch (file("tlsCert", certificatePath), file("tlsKey", keyPath)) {
        case (.failure(let failure), _), (_, .failure(let failure)): return .failure(failure)
        case (.success(let read), .success(let readKey)):
            certificate = read
            key = readKey
        }
        do {
            return .success(try TLSCredentials(certificatePEM: certificate, keyPEM: key))
        } catch {
            let (configKey, path) = error.code == .tlsCertificate ? ("tlsCert", certificatePath) : ("tlsKey", keyPath)
            let message =
                error.code == .tlsKeyMismatch
                ? "\(keyPath) is not the private key of the certificate in \(certificatePath)"
                : "\(path): \(error.message)"
            return .failure(Failure(problem: ConfigurationProblem(configKey, message)))
        }
    }
}
