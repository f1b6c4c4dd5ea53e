import Foundation
import PulseGateway
import PulseTestSupport
import Testing

/// `pulsegate serve --tls-cert --tls-key` as a child process, with certificates `openssl` makes
/// and `curl --cacert` and `openssl s_client` as clients.
@Suite(.serialized) struct TLSEndToEndTests {
    static func start(_ root: ScratchDirectory, _ ingest: IngestFixture, certificate: String, key: String) async throws
        -> GatewayProcess
    {
        let executable = try #require(builtPulsegateExecutable(), "build the pulsegate executable first")
        return try await GatewayProcess.start(
            executable: executable, dataDirectory: root.path + "/gateway", upstream: ingest.address,
            extraArguments: ["--tls-cert", certificate, "--tls-key", key])
    }

    @Test func servesHTTPSWithTLS12OrNewerOnlyAndRecordsArrive() async throws {
        let root = try ScratchDirectory("tls-serve")
        defer { root.remove() }
        let pair = try await TestCertificate.make(in: root.path, name: "gateway")
        let ingest = try await IngestFixture.start(directory: root.path + "/ingest")
        let gateway = try await Self.start(root, ingest, certificate: pair.certificatePath, key: pair.keyPath)
        defer { Task { await ingest.stop() } }
        let url = "https://127.0.0.1:\(gateway.port)"
        #expect(gateway.logs.all.contains { $0.contains(#""tls":"on""#) })

        let body = Payload.logs(records: [Payload.uidRecord("tls-1")])
        let posted = try await curlHTTPS([
            "--cacert", pair.certificatePath, "-H", "Content-Type: application/json", "-H", "Apsio-App-Id: shop",
            "--data-binary", body, "\(url)/v1/logs",
        ])
        #expect(posted.status == 0 && posted.code == "200", "\(posted)")
        #expect(try await eventually { try await ingest.eventIDs(app: "shop").count == 1 })

        let tls12 = try await curlHTTPS([
            "--cacert", pair.certificatePath, "--tlsv1.2", "--tls-max", "1.2", url + "/livez",
        ])
        #expect(tls12.code == "200", "\(tls12)")
        let tls13 = try await curlHTTPS(["--cacert", pair.certificatePath, "--tlsv1.3", url + "/livez"])
        #expect(tls13.code == "200", "\(tls13)")
        // TLS 1.1 and older are refused in the handshake.
        let tls11 = try await curlHTTPS([
            "--cacert", pair.certificatePath, "--tlsv1", "--tls-max", "1.1", url + "/livez",
        ])
        #expect(tls11.status == 35, "\(tls11)")
        // A client that does not trust the certificate stops at verification; plain HTTP gets nothing.
        #expect(try await curlHTTPS([url + "/livez"]).status == 60)
        let plain = try await curlHTTPS(["http://127.0.0.1:\(gateway.port)/livez"])
        #expect(plain.status != 0 && plain.code != "200", "\(plain)")
        await gateway.terminate()
        #expect(gateway.process.terminationStatus == 0)
    }

    @Test func sighupSwapsTheCertificateWithoutClosingOpenConnections() async throws {
        let root = try ScratchDirectory("tls-reload")
        defer { root.remove() }
        let first = try await TestCertificate.make(in: root.path, name: "first")
        let second = try await TestCertificate.make(in: root.path, name: "second", algorithm: "rsa")
        let other = try await TestCertificate.make(in: root.path, name: "other")
        // The gateway reads these two paths; the test rewrites them.
        let certificate = root.path + "/served.crt"
        let key = root.path + "/served.key"
        func serve(_ pair: TestCertificate) throws {
            try? FileManager.default.removeItem(atPath: certificate)
            try? FileManager.default.removeItem(atPath: key)
            try FileManager.default.copyItem(atPath: pair.certificatePath, toPath: certificate)
            try FileManager.default.copyItem(atPath: pair.keyPath, toPath: key)
        }
        try serve(first)
        let ingest = try await IngestFixture.start(directory: root.path + "/ingest")
        defer { Task { await ingest.stop() } }
        let gateway = try await Self.start(root, ingest, certificate: certificate, key: key)
        let url = "https://127.0.0.1:\(gateway.port)/livez"

        // A kept-alive TLS connection, opened with the first certificate.
        let openssl = try #require(TestCertificate.executable("openssl"))
        let input = Pipe()
        let output = Pipe()
        let client = try launch(
            openssl,
            [
                "s_client", "-connect", "127.0.0.1:\(gateway.port)", "-CAfile", first.certificatePath,
                "-verify_return_error", "-quiet",
            ],
            input: input, output: output, error: FileHandle.nullDevice)
        defer { if client.isRunning { kill(client.processIdentifier, SIGKILL) } }
        let lines = ChildOutputLines(output.fileHandleForReading)
        let request = Data("GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        @Sendable func answers() -> Int { lines.all.filter { $0.hasPrefix("HTTP/1.1 200") }.count }
        let logs = gateway.logs
        input.fileHandleForWriting.write(request)
        #expect(await eventually { answers() == 1 })

        try serve(second)
        kill(gateway.servePID, SIGHUP)
        #expect(await eventually { logs.all.contains { $0.contains("TLS certificate reloaded") } })
        // The open connection is still served (same process, same TLS session).
        input.fileHandleForWriting.write(request)
        #expect(await eventually { answers() == 2 })
        #expect(client.isRunning)
        // New handshakes present the second certificate.
        #expect(try await curlHTTPS(["--cacert", second.certificatePath, url]).code == "200")
        #expect(try await curlHTTPS(["--cacert", first.certificatePath, url]).status == 60)

        // A pair that does not match is refused on reload; the second pair keeps serving.
        try? FileManager.default.removeItem(atPath: key)
        try FileManager.default.copyItem(atPath: other.keyPath, toPath: key)
        kill(gateway.servePID, SIGHUP)
        #expect(await eventually { logs.all.contains { $0.contains("TLS reload failed") } })
        let failure = gateway.logs.all.first { $0.contains("TLS reload failed") } ?? ""
        #expect(failure.contains("is not the private key of the certificate"), "\(failure)")
        #expect(try await curlHTTPS(["--cacert", second.certificatePath, url]).code == "200")
        input.fileHandleForWriting.write(request)
        #expect(await eventually { answers() == 3 })
        try input.fileHandleForWriting.close()
        await gateway.terminate()
    }

    @Test func unusableFilesStopTheStartNamingTheFileNeverTheKey() async throws {
        try await withPulsegate("tls-bad") { executable, root in
            let pair = try await TestCertificate.make(in: root.path, name: "pair")
            let other = try await TestCertificate.make(in: root.path, name: "other")
            let keyText = try String(contentsOfFile: other.keyPath, encoding: .utf8)
            let keyBody = keyText.split(separator: "\n").dropFirst().first.map(String.init) ?? "unused"
            let garbage = root.path + "/garbage.pem"
            try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: garbage))
            let cases: [([String], String)] = [
                (
                    ["--tls-cert", pair.certificatePath, "--tls-key", other.keyPath],
                    "tlsKey: \(other.keyPath) is not the private key"
                ),
                (
                    ["--tls-cert", root.path + "/missing.crt", "--tls-key", pair.keyPath],
                    "tlsCert: cannot read \(root.path)/missing.crt"
                ),
                (["--tls-cert", garbage, "--tls-key", pair.keyPath], "tlsCert: \(garbage): no PEM certificate"),
                (
                    ["--tls-cert", pair.certificatePath, "--tls-key", garbage],
                    "tlsKey: \(garbage): no unencrypted PEM private key"
                ),
                (["--tls-cert", pair.certificatePath], "tlsKey: is required with tlsCert"),
            ]
            for (arguments, expected) in cases {
                let result = try await runToExit(
                    executable,
                    [
                        "serve", "--listen", "127.0.0.1:0", "--data-dir", root.path + "/data", "--upstream",
                        "127.0.0.1:9",
                    ]
                        + arguments)
                #expect(result.status == 2, "\(arguments): \(result.standardError)")
                #expect(result.standardError.contains(expected), "\(result.standardError)")
                #expect(!result.standardError.contains("PRIVATE KEY") && !result.standardError.contains(keyBody))
            }
            // Nothing was started or written.
            #expect(!FileManager.default.fileExists(atPath: root.path + "/data/gateway.sqlite"))
        }
    }
}
