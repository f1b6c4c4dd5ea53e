import OTLPProtobuf
import Testing

@testable import PulseUploader

/// The uploader's signal is the project's one signal enum; the codes its queue stores must not
/// change with that (rows written by an older build are read back by a newer one).
@Suite struct SignalStorageTests {
    @Test func storedCodesStayZeroOneTwoAndRoundTrip() {
        #expect(Signal.allCases.map(\.storageCode) == [0, 1, 2])
        #expect(Signal.allCases.map(\.path) == ["/v1/logs", "/v1/traces", "/v1/metrics"])
        #expect(Signal.allCases.map(\.description) == ["logs", "traces", "metrics"])
        for signal in Signal.allCases { #expect(Signal(storageCode: signal.storageCode) == signal) }
        #expect(Signal(storageCode: 3) == nil)
    }
}
