extension OTLPValidator {
    /// A problem and the path to it, innermost component first while unwinding.
    struct Failure: Error, CustomStringConvertible {
        enum Component {
            case key(String)
            case index(Int)
        }

        var reversedPath: [Component] = []
        var problem: String

        init(_ problem: String) { self.problem = problem }

        var description: String {
            var path = ""
            for component in reversedPath.reversed() {
                switch component {
                case .key(let name): path += path.isEmpty ? name : "." + name
                case .index(let index): path += "[\(index)]"
                }
            }
            return path.isEmpty ? problem : path + ": " + problem
        }
    }
}
