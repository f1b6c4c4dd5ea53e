// An app's half of an OS-run transfer, written only against the `PulseUploader` product's public API:
// claim the due batches, export each to files, let "the operating system" send them, settle the results.
// On Apple platforms the OS is a background `URLSession` (see docs/uploader.md); here it is `curl`, run to
// completion in a child process, so the example runs anywhere the package builds.
//
//     uploader-transfer-example --endpoint http://127.0.0.1:4318 --data-dir /tmp/example-queue
import Foundation
import PulseUploader

func option(_ name: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else {
        return nil
    }
    return CommandLine.arguments[index + 1]
}

guard let endpoint = option("--endpoint"), let dataDirectory = option("--data-dir") else {
    FileHandle.standardError.write(Data("usage: uploader-transfer-example --endpoint URL --data-dir DIR\n".utf8))
    exit(2)
}
let curl = option("--curl") ?? "/usr/bin/curl"

let uploader = try await Uploader(
    configuration: UploaderConfiguration(endpoint: endpoint, appId: "transfer-example", dataDirectory: dataDirectory))
try await uploader.record(.event(EventEntry(name: "example.launch", attributes: ["cold": true])))
try await uploader.record(.crash(CrashReport(message: "example crash", stack: "#0 main", exceptionType: "SIGABRT")))
try await uploader.seal(.background)

/// What the "OS" hands back: the task's response, or its error.
func send(_ exported: ExportedTransfer) -> TransferResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: curl)
    process.arguments = [
        "--silent", "--show-error", "--request", exported.batch.request.method, "--header", "@" + exported.headersPath,
        "--header", "Expect:", "--data-binary", "@" + exported.bodyPath, "--dump-header",
        exported.directory + "/response-headers", "--output", exported.directory + "/response-body", "--write-out",
        "%{http_code}", exported.batch.request.url,
    ]
    let status = Pipe()
    process.standardOutput = status
    do {
        try process.run()
    } catch {
        return .failed(message: "cannot start curl")
    }
    let code = String(decoding: status.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0, let statusCode = Int(code) else {
        return .failed(message: "curl exited with status \(process.terminationStatus)")
    }
    // `URLSessionTask.response` as an `HTTPURLResponse` gives these directly.
    var headers: [String: String] = [:]
    let head = (try? String(contentsOfFile: exported.directory + "/response-headers", encoding: .utf8)) ?? ""
    for line in head.components(separatedBy: "\r\n") {
        if let colon = line.firstIndex(of: ":") {
            headers[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }
    let body = (try? Data(contentsOf: URL(fileURLWithPath: exported.directory + "/response-body"))) ?? Data()
    return .response(UploadResponse(status: statusCode, headers: headers, body: Array(body)))
}

// 1. Claim and export, as before creating `uploadTask(with:fromFile:)` tasks. The token goes into the
//    task's `taskDescription`; a background session may take hours, so ask for a long lease.
let outbox = dataDirectory + "/outbox"
var handedOver: [(token: String, exported: ExportedTransfer)] = []
for batch in try await uploader.claimForTransfer(leaseMilliseconds: 6 * 3_600_000) {
    let exported = try batch.export(into: outbox)
    print("claimed \(batch.lease.token): \(batch.requestLine), \(batch.request.body.count) bytes")
    handedOver.append((batch.lease.token, exported))
}

// 2. The transfer runs outside the uploader, and 3. each result is settled — in the app, this is
//    `urlSession(_:task:didCompleteWithError:)`, possibly in a relaunched process.
for (token, exported) in handedOver {
    let result = send(exported)
    guard let lease = BatchLease(token: token) else { continue }
    let settlement = try await uploader.settle(lease, result)
    print("settled \(token): \(settlement.effect.rawValue) \(settlement.verdict.rawValue)")
    try? FileManager.default.removeItem(atPath: exported.directory)
}
let status = try await uploader.status()
print("queue: \(status.totalRecords) records, \(status.diagnostics.batchesSentSuccessfully) batches sent ok")
try await uploader.close()
