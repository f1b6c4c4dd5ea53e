/// One `name=value` pair of a request's query string, percent-decoded.
public struct HTTPQueryItem: Sendable, Equatable {
    /// The decoded name.
    public var name: String
    /// The decoded value, or `nil` when the item had no `=` (as in `?flag`).
    public var value: String?

    /// Creates a query item.
    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}
