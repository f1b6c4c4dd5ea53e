/// One `name=value` pair of a request's query string, percent-decoded.
package struct HTTPQueryItem: Sendable, Equatable {
    /// The decoded name.
    package var name: String
    /// The decoded value, or `nil` when the item had no `=` (as in `?flag`).
    package var value: String?

    /// Creates a query item.
    package init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}
