import Foundation

/// The Linux ``OutOfProcessTransfer``: hands each exported batch to `curl` — an independent program, not
/// uploader code — started detached (its own session, like ``DetachedDrainTransfer``'s drain), exactly as
/// an app hands a file to a background `URLSession`. The uploader may die right after the hand-over; the
/// transfer completes anyway, and a later launch settles it.
///
/// Per batch, in its export folder: `/bin/sh` runs `curl --include --data-binary @body --header @headers`
/// (no `Apsio-Sent-At`: the uploader's code does not run when the request is sent), writes the response —
/// status line, headers, body — to `response`, then curl's exit status to `result`, last and by rename, so
/// a `result` file means the transfer ended. ``settleFinished(on:)`` settles every folder with a `result`
/// and removes it; a folder whose lease lapsed (plus ``abandonGraceMilliseconds``) without one is removed
/// unsettled: its batch is claimable again and is sent again with the same id and bytes.
public struct CurlProcessTransfer: OutOfProcessTransfer {
    /// Where batches are exported (one folder per lease).
    public var exportDirectory: String
    /// The `curl` executable.
    public var curlPath: String
    /// The shell that runs curl and writes the result file.
    public var shellPath: String

    /// How long after its lease lapsed a transfer without a result is given up (curl gives up before the
    /// lease lapses; this covers its exit).
    public static let abandonGraceMilliseconds: Int64 = 30_000
    /// The response (`curl --include`: status line, headers, body) inside a transfer's folder.
    public static let responseFileName = "response"
    /// curl's exit status inside a transfer's folder; written last, so its presence means the transfer ended.
    public static let resultFileName = "result"

    /// Creates a transfer exporting into `exportDirectory`.
    public init(exportDirectory: String, curlPath: String = "/usr/bin/curl", shellPath: String = "/bin/sh") {
        self.exportDirectory = exportDirectory
        self.curlPath = curlPath
        self.shellPath = shellPath
    }

    /// The script `sh -c` runs: `$0` the folder, `$1` curl, `$2` the URL, `$3` curl's time limit (s).
    static let script = """
        cd "$0" || exit 1
        "$1" --silent --show-error --include --http1.1 --request POST --header @headers --header 'Expect:' \
        --data-binary @body --connect-timeout 10 --max-time "$3" --output response.part "$2"
        echo "$?" > result.part
        if [ -f response.part ]; then mv response.part response; fi
        mv result.part result
        """

    public func start(_ batches: [ExportedTransfer]) async throws(UploaderError) {
        for exported in batches {
            // curl gives up well before the lease lapses, so a lapsed lease means the result will not come.
            let limit = max(5, exported.batch.leaseMilliseconds / 1_000 - 15)
            let spawner = DetachedDrainTransfer(
                executablePath: shellPath,
                arguments: [
                    "-c", Self.script, exported.directory, curlPath, exported.batch.request.url, String(limit),
                ],
                logPath: exported.directory + "/transfer.log")
            _ = try spawner.spawn()
        }
    }

    public func settleFinished(on uploader: Uploader) async throws(UploaderError) -> [TransferSettlement] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: exportDirectory)) ?? []
        var settlements: [TransferSettlement] = []
        for entry in entries.sorted() {
            guard let lease = BatchLease(token: entry) else { continue }
            let folder = exportDirectory + "/" + entry
            if let status = try? String(contentsOfFile: folder + "/" + Self.resultFileName, encoding: .utf8) {
                let response = try? Data(contentsOf: URL(fileURLWithPath: folder + "/" + Self.responseFileName))
                let result = CurlResponseFile.result(exitStatus: status, response: response.map { Array($0) })
                settlements.append(try await uploader.settle(lease, result))
                try? FileManager.default.removeItem(atPath: folder)
            } else if let expiry = Self.leaseExpiry(folder),
                uploader.clock.nowMilliseconds() > expiry + Self.abandonGraceMilliseconds
            {
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        return settlements
    }

    private static func leaseExpiry(_ folder: String) -> Int64? {
        guard
            let text = try? String(
                contentsOfFile: folder + "/" + TransferBatch.FileName.leaseExpiry, encoding: .utf8)
        else { return nil }
        return Int64(text.trimmingASCIIWhitespace())
    }
}
