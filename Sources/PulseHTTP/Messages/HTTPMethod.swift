/// An HTTP request method, compared case-sensitively as RFC 9110 requires.
package struct HTTPMethod: Sendable, Hashable, CustomStringConvertible {
    /// The method token as received, e.g. `POST`.
    package let rawValue: String

    /// Creates a method from its token.
    package init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    package var description: String { rawValue }

    /// GET.
    package static let get = HTTPMethod("GET")
    /// HEAD.
    package static let head = HTTPMethod("HEAD")
    /// POST.
    package static let post = HTTPMethod("POST")
    /// PUT.
    package static let put = HTTPMethod("PUT")
    /// DELETE.
    package static let delete = HTTPMethod("DELETE")
    /// OPTIONS.
    package static let options = HTTPMethod("OPTIONS")
    /// PATCH.
    package static let patch = HTTPMethod("PATCH")
}
