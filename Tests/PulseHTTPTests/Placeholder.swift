import PulseHTTP
import Testing

@Test func placeholder() { #expect(HTTPStatus.ok.code == 200) }
