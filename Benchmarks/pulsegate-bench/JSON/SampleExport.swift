import Foundation

/// Saves the sample documents (`json-samples`) so other tools and tests can use them.
enum JSONSampleExport {
    static func write(to directory: String) -> Bool {
        let files = [
            ("otlp-logs-20.json", SampleDocuments.otlpLogs()),
            ("pulse-batch-64.json", SampleDocuments.pulseBatch()),
        ]
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for (name, bytes) in files {
                let path = directory + "/" + name
                try Data(bytes + [0x0A]).write(to: URL(fileURLWithPath: path))
                print("wrote \(path) (\(bytes.count) bytes)")
            }
            return true
        } catch {
            print("error: \(error)")
            return false
        }
    }
}
