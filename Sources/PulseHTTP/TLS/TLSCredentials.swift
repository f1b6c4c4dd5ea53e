import CPulseShims
import PulseKit

/// A PEM certificate chain and its private key, checked, for an ``HTTPServer`` that serves HTTPS
/// (``HTTPServerConfiguration/tls``, ``HTTPServer/replaceTLSCredentials(_:)``).
///
/// The chain is the server's certificate first, then any intermediates (at most 16). The key is an
/// unencrypted PEM private key (`BEGIN PRIVATE KEY`, `BEGIN RSA PRIVATE KEY` or
/// `BEGIN EC PRIVATE KEY`) and must be the first certificate's. Printing the value shows neither
/// the certificate nor the key.
package struct TLSCredentials: Sendable, Equatable, CustomStringConvertible {
    let certificatePEM: [UInt8]
    let keyPEM: [UInt8]

    /// Parses and checks the PEM texts.
    ///
    /// - Throws: ``HTTPServerError`` with `tlsCertificate` (no certificate could be parsed) or
    ///   `tlsKey` (no key could be parsed, or it is encrypted) or `tlsKeyMismatch` (the key is not
    ///   the first certificate's);
    ///   the message gives GnuTLS's reason, never key material.
    package init(certificatePEM: [UInt8], keyPEM: [UInt8]) throws(HTTPServerError) {
        self.certificatePEM = certificatePEM
        self.keyPEM = keyPEM
        pg_tls_credentials_free(try makeNative())
    }

    /// Parses the PEM texts into native credentials; the caller owns the result.
    func makeNative() throws(HTTPServerError) -> OpaquePointer {
        var native: OpaquePointer?
        var detail = [CChar](repeating: 0, count: 256)
        let result = certificatePEM.withUnsafeBufferPointer { certificate in
            keyPEM.withUnsafeBufferPointer { key in
                certificate.withMemoryRebound(to: CChar.self) { certificate in
                    key.withMemoryRebound(to: CChar.self) { key in
                        pg_tls_credentials_create(
                            certificate.baseAddress, certificate.count, key.baseAddress, key.count, &native, &detail,
                            detail.count)
                    }
                }
            }
        }
        let reason = detail.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        switch Int(result) {
        case Int(PG_TLS_OK):
            guard let native else { throw HTTPServerError(.tlsKey, "the TLS credentials could not be created") }
            return native
        case Int(PG_TLS_BAD_CERTIFICATE):
            throw HTTPServerError(.tlsCertificate, "no PEM certificate could be read (\(reason))")
        case Int(PG_TLS_BAD_KEY):
            throw HTTPServerError(
                .tlsKey, "no unencrypted PEM private key could be read (\(reason))")
        case Int(PG_TLS_KEY_MISMATCH):
            throw HTTPServerError(.tlsKeyMismatch, "the private key does not belong to the certificate")
        default:
            throw HTTPServerError(.tlsKey, "the TLS credentials could not be created (\(reason))")
        }
    }

    package var description: String { "TLSCredentials(certificate: \(certificatePEM.count) bytes, key: redacted)" }
}
