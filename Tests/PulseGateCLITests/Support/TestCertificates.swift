import Foundation
import PulseTestSupport
import Testing

/// Self-signed certificates for the TLS tests, made with the `openssl` command (apt `openssl`,
/// installed by scripts/test): each is its own CA, valid for `127.0.0.1` and `localhost`.
struct TestCertificate {
    /// The PEM certificate (also the CA file a client trusts it with).
    let certificatePath: String
    /// The PEM private key.
    let keyPath: String

    /// Generates a key (`ec` P-256 or `rsa` 2048) and its certificate in `directory`.
    static func make(in directory: String, name: String, algorithm: String = "ec") async throws -> TestCertificate {
        let openssl = try #require(Self.executable("openssl"), "install openssl (apt-get install openssl)")
        let certificate = TestCertificate(
            certificatePath: "\(directory)/\(name).crt", keyPath: "\(directory)/\(name).key")
        let key =
            algorithm == "rsa" ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        let result = try await runToExit(
            openssl,
            ["req", "-x509"] + key + [
                "-nodes", "-keyout", certificate.keyPath, "-out", certificate.certificatePath, "-days", "2",
                "-subj", "/CN=\(name)", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ])
        guard result.status == 0 else { throw TestClientError("openssl req failed: \(result.standardError)") }
        return certificate
    }

    /// The full path of a command on `PATH` (or in /usr/bin), or `nil`.
    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") + ["/usr/bin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// `curl` against an HTTPS gateway: the status code it printed (`-w %{http_code}`) and its exit
/// status (60 when the certificate does not verify, 35 when the handshake fails).
func curlHTTPS(_ arguments: [String]) async throws -> (status: Int32, code: String, errors: String) {
    let curl = try #require(TestCertificate.executable("curl"), "install curl (apt-get install curl)")
    let result = try await runToExit(
        curl, ["-sS", "-o", "/dev/null", "-w", "%{http_code}\n", "--max-time", "20"] + arguments)
    return (result.status, result.standardOutput, result.standardError)
}
