import Testing

@testable import PulseGateway

/// The key test of redaction: every fragment, anywhere in the key, in any ASCII case.
@Suite struct RedactionTests {
    @Test(arguments: Redaction.sensitiveFragments)
    func everyFragmentMatchesAnywhereInAnyCase(_ fragment: String) {
        #expect(Redaction.isSensitive(fragment))
        #expect(Redaction.isSensitive("http.request.header." + fragment))
        #expect(Redaction.isSensitive(fragment.uppercased() + ".value"))
        #expect(Redaction.isSensitive("x-" + fragment.prefix(1).uppercased() + fragment.dropFirst() + "-x"))
        // One byte short of the fragment is not a match.
        #expect(!Redaction.isSensitive(String(fragment.dropLast())))
    }

    @Test func ordinaryKeysAreKept() {
        for key in ["", "a", "service.name", "session.id", "app.launch.type", "url.full", "pass", "tok", "api.key"] {
            #expect(!Redaction.isSensitive(key), "\(key)")
        }
        #expect(Redaction.isSensitive("cookies"))
        // Overlapping near-misses before the real fragment still find it.
        #expect(Redaction.isSensitive("passpasswd"))
        #expect(Redaction.isSensitive("sesssession_key"))
        #expect(Redaction.isSensitive("ééapikey"))
    }
}
