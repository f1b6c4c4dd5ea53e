/// Server-issued connection IDs: 32 random lower-case hex characters.
enum ConnectionID {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in 0..<32 {
            bytes[index] = digits[Int(generator.next() % 16)]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
