import PulseJSON
import PulseKit

/// Transcodes one protobuf-encoded OTLP message into its OTLP/JSON form in a single output: JSON text
/// (``JSONWriter``) or straight into the document model the gateway's mapping walks
/// (``JSONDocumentBuilder``), the same values in the same order either way.
///
/// The transcoder does not build a message tree. For each message it scans the fields once,
/// recording every known field's occurrence (``FieldOccurrence``) on a shared stack, then writes the
/// JSON object with the fields in field-number order, recursing into embedded messages as it writes
/// them. Memory is therefore bounded by the output plus the occurrences of the messages on the
/// current path, whatever the shape of the input.
///
/// Documents are first tried in one pass (``writeInOrder(_:_:depth:)``), writing each field as it
/// is read, which gives the same output whenever every message's fields arrive in field-number
/// order; at the first message where they do not, or at any error, the output starts over on the
/// two-pass path, which then writes the output or throws the error.
///
/// Protobuf semantics are kept: unknown fields (and known field numbers with an unexpected wire
/// type, which protobuf parsers also treat as unknown) are skipped; the last occurrence of a singular
/// scalar wins; occurrences of a singular message field are merged; repeated fields concatenate
/// every occurrence, packed or not; the last member of a oneof wins (merging the run of that member
/// that follows the last other member). Everything on the wire is validated, including values that
/// are not written (earlier occurrences, oneof members that lost), so the transcoder rejects what a
/// conforming parser rejects. It is stricter in three ways: groups are rejected, a varint whose
/// value does not fit in 64 bits is rejected (upb drops the extra bits), and nesting is bounded by
/// ``OTLPProtobufLimits/maxDepth``.
struct Transcoder<Output: TranscodingOutput & ~Copyable>: ~Copyable {
    private let input: UnsafeBufferPointer<UInt8>
    private let limits: OTLPProtobufLimits
    /// ``MessageKind/layouts``: each message's fields by `rawValue`.
    private let layouts: UnsafePointer<MessageLayout>
    private let root: MessageKind
    /// The output.
    private(set) var writer: Output
    /// Known-field occurrences of the messages on the current path, innermost last.
    private var occurrences = ScratchStack<FieldOccurrence>(capacity: 256)
    /// The chains of the messages on the current path, one per field of each message's schema,
    /// innermost last (a chain is set when its field is first seen).
    private var chains = ScratchStack<FieldChain>(capacity: 128)
    private var path = ScratchStack<PathComponent>(capacity: 16)
    private var depth = 0

    init(input: UnsafeBufferPointer<UInt8>, root: MessageKind, limits: OTLPProtobufLimits) {
        self.input = input
        self.limits = limits
        layouts = MessageKind.layouts.base
        self.root = root
        writer = Output.sized(forInput: input.count, limit: limits.maxOutputBytes)
    }

    /// The output, once ``transcode(_:)`` has written it.
    consuming func output() -> Output { writer }

    /// Writes the message `kind` found in the whole input.
    mutating func transcode(_ kind: MessageKind) throws(OTLPProtobufError) {
        if Output.writesInOrder {
            if writeInOrder(kind, 0..<input.count, depth: 1) { return }
            writer.reset()
        }
        try emitMessage(kind, from: .range(0..<input.count))
    }

    // MARK: In order, one pass

    /// Writes the message `kind` in `range` while reading it, in one pass, as long as its fields
    /// and its descendants' arrive in field-number order with each repeated field's occurrences
    /// together and no singular field or oneof repeated: how OTLP encoders write them, and the
    /// case where the output is the two-pass path's (``emitMessage(_:from:)``) without sorting,
    /// merging or losers. Returns `false` as soon as that does not hold, and on anything the
    /// two-pass path rejects (malformed wire data, invalid UTF-8, a limit); the caller then
    /// starts the output over and takes the two-pass path, which writes the same output or
    /// throws its error. Giving up costs at most one extra pass over the request.
    private mutating func writeInOrder(_ kind: MessageKind, _ range: Range<Int>, depth: Int) -> Bool {
        guard depth <= limits.maxDepth else { return false }
        // Read in place: a message reads only some of its layout's members.
        let schema = layouts + kind.rawValue
        var reader = WireReader(input, range: range)
        var present: UInt32 = 0
        var previous = -1
        // Values written to the open array of field `previous` (0: no array open).
        var elements = 0
        writer.beginObject()
        while !reader.isAtEnd {
            let fieldIndex: Int
            let occurrence: FieldOccurrence
            // A known field's one-byte tag (fields 1-15: every OTLP field but Span.flags, 16) is looked up
            // as it is; any other tag takes the reader's checks and the lookup by number.
            let byte = reader.base[reader.position]
            if byte < 0x80, case let index = schema.pointee.tagField(byte), index >= 0 {
                reader.position &+= 1
                guard let value = try? reader.readOccurrence(WireType(rawValue: byte & 7).unsafelyUnwrapped)
                else { return false }
                fieldIndex = index
                occurrence = value
            } else {
                guard let tag = try? reader.readTag() else { return false }
                guard let value = try? reader.readOccurrence(tag.wireType) else { return false }
                guard let index = schema.pointee.fieldIndex(tag.number), schema.pointee.accepts(index, tag.wireType)
                else {
                    continue
                }
                fieldIndex = index
                occurrence = value
            }
            // Read in place: an occurrence needs only some of the field's members.
            let field = schema.pointee.fields + fieldIndex
            if fieldIndex != previous {
                guard fieldIndex > previous else { return false }
                if case .oneof(let group) = field.pointee.cardinality, present & schema.pointee.oneofMembers(group) != 0
                {
                    return false
                }
                if elements > 0 { writer.endArray() }
                elements = 0
                previous = fieldIndex
                present |= 1 &<< UInt32(truncatingIfNeeded: fieldIndex)
            } else if field.pointee.cardinality != .repeated {
                return false
            }
            if field.pointee.cardinality == .repeated {
                if occurrence.isLengthDelimited && field.pointee.kind.isPackable {
                    var run = WireReader(input, range: occurrence.payload)
                    while !run.isAtEnd {
                        guard let value = try? run.readPackedValue(field.pointee.kind) else { return false }
                        if elements == 0 { openArray(field.pointee.name, slot: schema.pointee.keySlot(fieldIndex)) }
                        writeNumber(field.pointee.kind, value)
                        elements += 1
                    }
                    continue
                }
                if elements == 0 { openArray(field.pointee.name, slot: schema.pointee.keySlot(fieldIndex)) }
                elements += 1
            } else if field.pointee.cardinality == .implicit && isDefault(field.pointee.kind, occurrence) {
                continue
            } else {
                writer.key(field.pointee.name, slot: schema.pointee.keySlot(fieldIndex))
            }
            if case .message(let child) = field.pointee.kind {
                guard writeInOrder(child, occurrence.payload, depth: depth + 1) else { return false }
            } else {
                guard writeScalar(field.pointee.kind, occurrence) else { return false }
            }
        }
        if elements > 0 { writer.endArray() }
        writer.endObject()
        return writer.count <= limits.maxOutputBytes
    }

    private mutating func openArray(_ key: StaticString, slot: Int) {
        writer.key(key, slot: slot)
        writer.beginArray()
    }

    // MARK: Messages

    /// Scans the message at `source` and writes it as a JSON object.
    private mutating func emitMessage(_ kind: MessageKind, from source: MessageSource) throws(OTLPProtobufError) {
        let schema = layouts[kind.rawValue]
        depth += 1
        defer { depth -= 1 }
        if depth > limits.maxDepth {
            throw failure(
                .nestingTooDeep, "messages nested deeper than \(limits.maxDepth) levels", at: start(of: source))
        }
        let base = occurrences.count
        let chainBase = chains.extend(by: schema.fieldCount)
        defer {
            occurrences.truncate(to: base)
            chains.truncate(to: chainBase)
        }
        // Bit `1 << index` for each field index with an occurrence (its chain is set).
        var present: UInt32 = 0
        switch source {
        case .range(let range):
            try scan(schema, range, chainBase: chainBase, present: &present)
        case .chain(let first):
            var cursor: Int? = first
            while let index = cursor {
                try scan(schema, occurrences[index].payload, chainBase: chainBase, present: &present)
                cursor = occurrence(after: index)
            }
        }
        writer.beginObject()
        var remaining = present
        while remaining != 0 {
            let fieldIndex = remaining.trailingZeroBitCount
            remaining &= remaining - 1
            try emitField(fieldIndex, of: schema, chainBase: chainBase, present: present)
        }
        writer.endObject()
        if writer.count > limits.maxOutputBytes {
            throw failure(
                .outputTooLarge, "\(Output.measure) larger than \(limits.maxOutputBytes) bytes", at: start(of: source))
        }
    }

    /// Writes a message without keeping the output, to validate a value that is not written (a
    /// oneof member that lost).
    private mutating func validateMessage(_ kind: MessageKind, from source: MessageSource) throws(OTLPProtobufError) {
        var discard = Output.scratch()
        swap(&writer, &discard)
        defer { swap(&writer, &discard) }
        try emitMessage(kind, from: source)
    }

    /// Records the known fields in `range`, validating the wire format of every field, and chains
    /// each one to the earlier occurrences of its field (`present` marks the fields seen so far).
    private mutating func scan(
        _ schema: MessageLayout, _ range: Range<Int>, chainBase: Int, present: inout UInt32
    ) throws(OTLPProtobufError) {
        var reader = WireReader(input, range: range)
        while !reader.isAtEnd {
            let tag: WireTag
            do {
                tag = try reader.readTag()
            } catch {
                throw failure(error, field: nil)
            }
            let fieldIndex = schema.fieldIndex(tag.number)
            let occurrence: FieldOccurrence
            do {
                occurrence = try reader.readOccurrence(tag.wireType)
            } catch {
                throw failure(
                    error, field: component(for: tag.number, fieldIndex, in: schema, chainBase: chainBase, present))
            }
            if let fieldIndex, schema.accepts(fieldIndex, tag.wireType) {
                let index = occurrences.count
                occurrences.append(occurrence)
                let bit: UInt32 = 1 << UInt32(fieldIndex)
                if present & bit == 0 {
                    present |= bit
                    chains[chainBase + fieldIndex] = FieldChain(first: UInt32(index), last: UInt32(index))
                } else {
                    occurrences[Int(chains[chainBase + fieldIndex].last)].next = UInt32(index)
                    chains[chainBase + fieldIndex].last = UInt32(index)
                }
            }
        }
    }

    /// The next occurrence of the same field after the one at `index`, `nil` after the last.
    private func occurrence(after index: Int) -> Int? {
        let next = occurrences[index].next
        return next == 0 ? nil : Int(next)
    }

    // MARK: Fields

    /// Writes field `fieldIndex` of the message whose chains start at `chainBase` (the field occurs
    /// at least once; `present` marks the fields that occur), if it has a value to write.
    private mutating func emitField(
        _ fieldIndex: Int, of schema: MessageLayout, chainBase: Int, present: UInt32
    ) throws(OTLPProtobufError) {
        let field = schema.fields[fieldIndex]
        let key = field.name
        let slot = schema.keySlot(fieldIndex)
        let chain = chains[chainBase + fieldIndex]
        let first = Int(chain.first)
        let last = Int(chain.last)
        switch field.cardinality {
        case .repeated:
            if case .message(let child) = field.kind {
                writer.key(key, slot: slot)
                writer.beginArray()
                var count = 0
                var cursor: Int? = first
                while let index = cursor {
                    path.append(PathComponent(name: field.name, index: count))
                    try emitMessage(child, from: .range(occurrences[index].payload))
                    path.removeLast()
                    count += 1
                    cursor = occurrence(after: index)
                }
                writer.endArray()
            } else {
                try emitRepeatedScalars(field, key: key, slot: slot, first: first)
            }

        case .implicit, .explicit:
            if case .message(let child) = field.kind {
                writer.key(key, slot: slot)
                path.append(PathComponent(name: field.name, index: -1))
                try emitMessage(child, from: .chain(first: first))
                path.removeLast()
                return
            }
            try validateLosers(field, from: first, before: last)
            let occurrence = occurrences[last]
            if field.cardinality == .implicit && isDefault(field.kind, occurrence) { return }
            writer.key(key, slot: slot)
            try writeValue(field, occurrence, as: PathComponent(name: field.name, index: -1))

        case .oneof(let group):
            // The member seen last wins; `othersLast` is where the other members were last seen.
            var othersLast = -1
            var members = present & schema.oneofMembers(group) & ~(1 << UInt32(fieldIndex))
            while members != 0 {
                othersLast = max(othersLast, Int(chains[chainBase + members.trailingZeroBitCount].last))
                members &= members - 1
            }
            guard othersLast < last else {
                // Another member won; this one must still be well-formed.
                try validateLosers(field, from: first, before: Int.max)
                return
            }
            if case .message(let child) = field.kind {
                // Merge the run of this member after the last other member of the oneof.
                try validateLosers(field, from: first, before: othersLast)
                var runFirst = first
                while runFirst < othersLast, let next = occurrence(after: runFirst) { runFirst = next }
                writer.key(key, slot: slot)
                path.append(PathComponent(name: field.name, index: -1))
                try emitMessage(child, from: .chain(first: runFirst))
                path.removeLast()
            } else {
                try validateLosers(field, from: first, before: last)
                writer.key(key, slot: slot)
                try writeValue(field, occurrences[last], as: PathComponent(name: field.name, index: -1))
            }
        }
    }

    /// Writes a repeated scalar field: every occurrence chained from `first`, packed runs and
    /// single values alike.
    private mutating func emitRepeatedScalars(
        _ field: FieldSchema, key: StaticString, slot: Int, first: Int
    ) throws(OTLPProtobufError) {
        var count = 0
        var cursor: Int? = first
        while let index = cursor {
            let occurrence = occurrences[index]
            cursor = self.occurrence(after: index)
            if occurrence.isLengthDelimited && field.kind.isPackable {
                var reader = WireReader(input, range: occurrence.payload)
                while !reader.isAtEnd {
                    let value: UInt64
                    do {
                        value = try reader.readPackedValue(field.kind)
                    } catch {
                        throw failure(error, field: PathComponent(name: field.name, index: count))
                    }
                    if count == 0 {
                        writer.key(key, slot: slot)
                        writer.beginArray()
                    }
                    writeNumber(field.kind, value)
                    count += 1
                }
            } else {
                if count == 0 {
                    writer.key(key, slot: slot)
                    writer.beginArray()
                }
                try writeValue(field, occurrence, as: PathComponent(name: field.name, index: count))
                count += 1
            }
        }
        if count > 0 { writer.endArray() }
    }

    /// Validates the occurrences of a field chained from `first` whose index is below `stop`,
    /// whose values are not written: earlier occurrences of a singular field and members of a
    /// oneof that lost. Most fields occur once, so there is usually nothing to do.
    @inline(__always)
    private mutating func validateLosers(
        _ field: FieldSchema, from first: Int, before stop: Int
    ) throws(OTLPProtobufError) {
        if first < stop { try validateEachLoser(field, from: first, before: stop) }
    }

    private mutating func validateEachLoser(
        _ field: FieldSchema, from first: Int, before stop: Int
    ) throws(OTLPProtobufError) {
        switch field.kind {
        case .string:
            var cursor: Int? = first
            while let index = cursor, index < stop {
                _ = try validatedString(occurrences[index].payload, as: PathComponent(name: field.name, index: -1))
                cursor = occurrence(after: index)
            }
        case .message(let child):
            var cursor: Int? = first
            while let index = cursor, index < stop {
                path.append(PathComponent(name: field.name, index: -1))
                try validateMessage(child, from: .range(occurrences[index].payload))
                path.removeLast()
                cursor = occurrence(after: index)
            }
        default:
            break
        }
    }

    // MARK: Values

    /// Whether a singular field without presence holds its default value (and is not written).
    private func isDefault(_ kind: FieldKind, _ occurrence: FieldOccurrence) -> Bool {
        switch kind {
        case .string, .bytesBase64, .bytesHex, .message:
            return occurrence.payload.isEmpty
        case .int32, .enumeration, .uint32, .sint32:
            return UInt32(truncatingIfNeeded: occurrence.value) == 0
        case .bool, .int64, .uint64, .fixed32, .fixed64, .sfixed64, .double:
            // A double is default only when all its bits are zero (-0.0 is written).
            return occurrence.value == 0
        }
    }

    /// Writes one value of a scalar field; `component` names it in an error.
    private mutating func writeValue(
        _ field: FieldSchema, _ occurrence: FieldOccurrence, as component: PathComponent
    ) throws(OTLPProtobufError) {
        guard writeScalar(field.kind, occurrence) else { throw invalidUTF8(occurrence.payload, as: component) }
    }

    /// Writes one value of a scalar field of `kind`; returns `false`, writing nothing, for a
    /// string that is not valid UTF-8.
    private mutating func writeScalar(_ kind: FieldKind, _ occurrence: FieldOccurrence) -> Bool {
        switch kind {
        case .string:
            let bytes = UnsafeBufferPointer(rebasing: input[occurrence.payload])
            guard UTF8Validation.isValid(bytes) else { return false }
            writer.string(utf8: bytes)
        case .bytesHex:
            writer.hexString(UnsafeBufferPointer(rebasing: input[occurrence.payload]))
        case .bytesBase64:
            writer.base64String(UnsafeBufferPointer(rebasing: input[occurrence.payload]))
        case .message:
            preconditionFailure("messages are written by emitMessage and writeInOrder")
        default:
            writeNumber(kind, occurrence.value)
        }
        return true
    }

    /// Writes a varint or fixed-width value per OTLP/JSON: 32-bit integers and enums as numbers,
    /// 64-bit integers as decimal strings, doubles as numbers or `"NaN"`/`"Infinity"`/`"-Infinity"`.
    private mutating func writeNumber(_ kind: FieldKind, _ value: UInt64) {
        switch kind {
        case .bool:
            writer.bool(value != 0)
        case .int32, .enumeration:
            writer.int(Int64(Int32(truncatingIfNeeded: value)))
        case .uint32, .fixed32:
            writer.uint(UInt64(UInt32(truncatingIfNeeded: value)))
        case .sint32:
            let raw = UInt32(truncatingIfNeeded: value)
            writer.int(Int64(Int32(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))))
        case .int64, .sfixed64:
            writer.string(decimal: Int64(bitPattern: value))
        case .uint64, .fixed64:
            writer.string(decimal: value)
        case .double:
            let number = Double(bitPattern: value)
            if number.isFinite {
                writer.double(number)
            } else if number.isNaN {
                writer.string("NaN")
            } else {
                writer.string(number < 0 ? "-Infinity" : "Infinity")
            }
        case .string, .bytesBase64, .bytesHex, .message:
            preconditionFailure("not a numeric kind")
        }
    }

    /// The UTF-8 bytes in `range` (the input's, valid while it is), the value of the field
    /// `component` names.
    private func validatedString(
        _ range: Range<Int>, as component: PathComponent
    ) throws(OTLPProtobufError) -> UnsafeBufferPointer<UInt8> {
        let bytes = UnsafeBufferPointer(rebasing: input[range])
        guard UTF8Validation.isValid(bytes) else { throw invalidUTF8(range, as: component) }
        return bytes
    }

    /// The error for the string in `range`, the value of the field `component` names.
    private func invalidUTF8(_ range: Range<Int>, as component: PathComponent) -> OTLPProtobufError {
        failure(.invalidUTF8, "string is not valid UTF-8", at: range.lowerBound, field: component)
    }

    // MARK: Errors

    private func start(of source: MessageSource) -> Int {
        switch source {
        case .range(let range): range.lowerBound
        case .chain(let first): Int(occurrences[first].value)
        }
    }

    /// The path component naming field `number` in an error found while scanning it (`present`
    /// marks the fields of the message with a chain at `chainBase`).
    private func component(
        for number: UInt32, _ fieldIndex: Int?, in schema: MessageLayout, chainBase: Int, _ present: UInt32
    ) -> PathComponent {
        guard let fieldIndex else { return PathComponent(name: "", index: -1, unknownNumber: number) }
        let field = schema.fields[fieldIndex]
        guard field.cardinality == .repeated else { return PathComponent(name: field.name, index: -1) }
        // The element's index: the occurrences of this field recorded so far in this message.
        var count = 0
        var cursor: Int? = present & 1 << UInt32(fieldIndex) == 0 ? nil : Int(chains[chainBase + fieldIndex].first)
        while let index = cursor {
            count += 1
            cursor = occurrence(after: index)
        }
        return PathComponent(name: field.name, index: count)
    }

    private func failure(_ fault: WireFault, field: PathComponent?) -> OTLPProtobufError {
        failure(fault.code, fault.what, at: fault.offset, field: field)
    }

    private func failure(
        _ code: OTLPProtobufError.Code, _ what: String, at offset: Int, field: PathComponent? = nil
    ) -> OTLPProtobufError {
        var components = path.elements
        if let field { components.append(field) }
        let rendered = components.map(\.rendered).joined(separator: ".")
        let subject = rendered.isEmpty ? MessageKind.table[root.rawValue].name : rendered
        return OTLPProtobufError(
            code, "\(subject): \(what)", detail: OTLPProtobufErrorDetail(path: rendered, offset: offset))
    }
}

extension WireReader {
    /// Reads the value of a field whose tag has `wireType` (not a group, which ``readTag()``
    /// rejects): the value, or for a length-delimited field its payload's range.
    @inline(__always)
    mutating func readOccurrence(_ wireType: WireType) throws(WireFault) -> FieldOccurrence {
        var occurrence = FieldOccurrence(value: 0, end: 0, next: 0)
        switch wireType {
        case .varint:
            occurrence.value = try readVarint()
        case .fixed64:
            occurrence.value = try readFixed64()
        case .fixed32:
            occurrence.value = UInt64(try readFixed32())
        case .lengthDelimited:
            let payload = try readLengthDelimited()
            occurrence.value = UInt64(payload.lowerBound)
            occurrence.end = UInt32(truncatingIfNeeded: payload.upperBound)  // inputs are below 4 GiB
        case .startGroup, .endGroup:
            preconditionFailure("readTag rejects groups")
        }
        return occurrence
    }

    /// Reads one value of a packed run of a numeric field of `kind`.
    @inline(__always)
    mutating func readPackedValue(_ kind: FieldKind) throws(WireFault) -> UInt64 {
        switch kind.wireType {
        case .fixed64: try readFixed64()
        case .fixed32: UInt64(try readFixed32())
        default: try readVarint()
        }
    }
}
