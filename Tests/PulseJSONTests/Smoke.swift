import CPulseSimdJSON
import Testing

@Test func simdjsonLinks() { #expect(pgjson_version() >= 3) }
