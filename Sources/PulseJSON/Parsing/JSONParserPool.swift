import Synchronization

/// A few reusable ``JSONParser``s shared by concurrent tasks, each used by one caller at a time.
///
/// A parser keeps its buffers between parses (``JSONParser``); creating one per request throws
/// that away. The pool keeps at most ``capacity`` idle parsers; more concurrent callers get a new
/// parser that is dropped afterwards, so the pool never holds more than `capacity` parsers'
/// buffers (each bounded by ``JSONParser/retainedBytesLimit``).
public final class JSONParserPool: Sendable {
    /// Idle parsers kept for reuse.
    public let capacity: Int
    private let maxDepth: Int
    private let maxBytes: Int
    private let bigIntegersAsDoubles: Bool
    private let idle = Mutex<[Box]>([])
    private let created = Atomic<Int>(0)

    /// One parser, owned by whoever took it out of the pool.
    private final class Box: @unchecked Sendable {
        let parser: JSONParser

        init(parser: JSONParser) {
            self.parser = parser
        }
    }

    /// Creates an empty pool of parsers with these settings (see
    /// ``JSONParser/init(maxDepth:maxBytes:bigIntegersAsDoubles:)``).
    public init(capacity: Int = 8, maxDepth: Int = 64, maxBytes: Int = 64 << 20, bigIntegersAsDoubles: Bool = false) {
        self.capacity = max(0, capacity)
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
        self.bigIntegersAsDoubles = bigIntegersAsDoubles
    }

    /// Parsers created so far (for tests and statistics).
    public var parsersCreated: Int { created.load(ordering: .relaxed) }

    /// Runs `body` with a parser no one else uses meanwhile.
    public func withParser<R, E: Error>(_ body: (JSONParser) throws(E) -> R) throws(E) -> R {
        let box: Box
        if let pooled = idle.withLock({ $0.popLast() }) {
            box = pooled
        } else {
            created.add(1, ordering: .relaxed)
            box = Box(
                parser: JSONParser(maxDepth: maxDepth, maxBytes: maxBytes, bigIntegersAsDoubles: bigIntegersAsDoubles))
        }
        defer {
            idle.withLock { idle in
                if idle.count < capacity { idle.append(box) }
            }
        }
        return try body(box.parser)
    }
}
