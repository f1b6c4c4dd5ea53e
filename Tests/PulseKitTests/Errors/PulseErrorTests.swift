import PulseKit
import Testing

private enum SampleErrorCode: String, PulseErrorCode, CaseIterable {
    case badInput
    case unavailable
}

private typealias SampleError = PulseError<SampleErrorCode>

private struct OffsetDetail: PulseErrorDetail, Equatable {
    var offset: Int?

    init() {}
    init(offset: Int?) { self.offset = offset }

    var descriptionSuffix: String { offset.map { " (at byte \($0))" } ?? "" }
}

private enum DetailedErrorCode: String, PulseErrorCode {
    typealias Detail = OffsetDetail
    case truncated
}

private enum GuardedErrorCode: String, PulseErrorCode {
    case rejected

    static var errorName: String { "Guarded" }
    static func describe(underlying: any Error & Sendable) -> String { "\(type(of: underlying))" }
}

private struct Leaky: Error, CustomStringConvertible {
    var description: String { "value SECRET-42 is invalid" }
}

@Suite("PulseError")
struct PulseErrorTests {
    @Test("the description is the error name, the code, the message and the cause")
    func description() {
        let plain = SampleError(.badInput, "field `id` is missing")
        #expect(plain.description == "SampleError.badInput: field `id` is missing")
        let wrapped = SampleError(.unavailable, "the store failed", underlying: plain)
        #expect(
            wrapped.description
                == "SampleError.unavailable: the store failed (underlying: SampleError.badInput: field `id` is missing)"
        )
    }

    @Test("the code and message are what the call site passed, the cause is kept")
    func fields() throws {
        let cause = SampleError(.badInput, "inner")
        let error = SampleError(.unavailable, "outer", underlying: cause)
        #expect(error.code == .unavailable)
        #expect(error.code.rawValue == "unavailable")
        #expect(error.message == "outer")
        let kept = try #require(error.underlying as? SampleError)
        #expect(kept.code == .badInput)
        #expect(kept.message == "inner")
    }

    @Test("file and line default to the position that created the error")
    func position() {
        let line: UInt = #line + 1
        let error = SampleError(.badInput, "here")
        #expect(error.file == "PulseKitTests/PulseErrorTests.swift")
        #expect(error.line == line)
        #expect(error.debugDescription == "SampleError.badInput: here [PulseKitTests/PulseErrorTests.swift:\(line)]")
        let forwarded = SampleError(.badInput, "there", file: "Module/Caller.swift", line: 7)
        #expect(forwarded.file == "Module/Caller.swift")
        #expect(forwarded.line == 7)
    }

    @Test("a typed throw keeps the code for the catch site")
    func typedThrow() {
        func fail() throws(SampleError) { throw SampleError(.unavailable, "down") }
        #expect(throws: SampleError.self) { try fail() }
        do {
            try fail()
        } catch {
            #expect(error.code == .unavailable)
        }
    }

    @Test("a module's detail is stored and appended to the message")
    func detail() {
        let error = PulseError<DetailedErrorCode>(.truncated, "body: truncated", detail: OffsetDetail(offset: 12))
        #expect(error.detail.offset == 12)
        #expect(error.description == "DetailedError.truncated: body: truncated (at byte 12)")
        let none = PulseError<DetailedErrorCode>(.truncated, "body: truncated")
        #expect(none.detail == OffsetDetail())
        #expect(none.description == "DetailedError.truncated: body: truncated")
    }

    @Test("a code type may rename the error and keep a cause's text out of the description")
    func guardedCause() {
        let error = PulseError<GuardedErrorCode>(.rejected, "kind is not allowed", underlying: Leaky())
        #expect(error.description == "Guarded.rejected: kind is not allowed (underlying: Leaky)")
        #expect(!error.description.contains("SECRET"))
        #expect(error.underlying is Leaky)
    }

    @Test("codes are distinct stable strings")
    func codeStrings() {
        let names = SampleErrorCode.allCases.map(\.rawValue)
        #expect(names == ["badInput", "unavailable"])
        #expect(SampleErrorCode(rawValue: "unavailable") == .unavailable)
        #expect(SampleErrorCode.errorName == "SampleError")
        #expect(PulseErrorNoDetail().descriptionSuffix.isEmpty)
    }
}
