/// An HTTP request method, compared case-sensitively as RFC 9110 requires.
public struct HTTPMethod: Sendable, Hashable, CustomStringConvertible {
    /// The method token as received, e.g. `POST`.
    public let rawValue: String

    /// Creates a method from its token.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// GET.
    public static let get = HTTPMethod("GET")
    /// HEAD.
    public static let head = HTTPMethod("HEAD")
    /// POST.
    public static let post = HTTPMethod("POST")
    /// PUT.
    public static let put = HTTPMethod("PUT")
    /// DELETE.
    public static let delete = HTTPMethod("DELETE")
    /// OPTIONS.
    public static let options = HTTPMethod("OPTIONS")
    /// PATCH.
    public static let patch = HTTPMethod("PATCH")
}
