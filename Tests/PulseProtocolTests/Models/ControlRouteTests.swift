import PulseKit
import PulseProtocol
import Testing

@Suite struct ControlRouteTests {
    @Test(arguments: [
        "telemetry.flush", "config.reload", "audit.permission_calls", "telemetry.queue.stats", "config.v2",
        "debug.ping",
    ])
    func wellFormedRoutesAreAccepted(_ name: String) throws {
        let route = try ControlRoute(validating: name)
        #expect(route.name == name)
        #expect(ControlRoute(name) == route)
    }

    @Test(arguments: [
        "", "telemetry", "Telemetry.flush", "telemetry.Flush", "telemetry..flush", ".telemetry", "telemetry.",
        "telemetry.1flush", "telemetry.flush-now", "telemetry flush", "télémetry.flush", "_config.get",
        "a.b.c.d.e.f.g.h.i", String(repeating: "a", count: 120) + ".flushing",
    ])
    func malformedRoutesAreRejected(_ name: String) {
        #expect(ControlRoute(name) == nil)
        #expect(throws: PulseProtocolError.self) { try ControlRoute(validating: name) }
    }

    @Test func namespaces() throws {
        #expect(ControlRoute.telemetryFlush.namespace == .telemetry)
        #expect(try ControlRoute(validating: "config.reload").namespace == .config)
        #expect(try ControlRoute(validating: "audit.permissions").namespace == .audit)
        #expect(try ControlRoute(validating: "debug.ping").namespace == nil)
    }

    @Test func decodingRejectsMalformedRoutesWithAClearError() throws {
        do {
            _ = try ControlRPCRequest(decodingJSON: utf8(#"{"route":"Telemetry.Flush","args":{}}"#))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidValue)
            #expect(error.description.contains("\"Telemetry.Flush\""))
        }
    }
}
