import Foundation
import PulseJSON

/// Writers for the OTLP JSON shapes shared by records, resources and batch bodies.
enum OTLPJSON {
    /// Writes `[{"key":…,"value":{…}}, …]` with keys sorted.
    static func writeAttributes(_ attributes: [String: AttributeValue], to writer: inout JSONWriter) {
        writeAttributes(attributes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, to: &writer)
    }

    /// Writes `[{"key":…,"value":{…}}, …]` in the given order.
    static func writeAttributes(_ attributes: [(String, AttributeValue)], to writer: inout JSONWriter) {
        writer.beginArray()
        for (key, value) in attributes {
            writer.beginObject()
            writer.key("key")
            writer.string(key)
            writer.key("value")
            writeAnyValue(value, to: &writer)
            writer.endObject()
        }
        writer.endArray()
    }

    /// Writes an `AnyValue` object such as `{"stringValue":"x"}`.
    static func writeAnyValue(_ value: AttributeValue, to writer: inout JSONWriter) {
        writer.beginObject()
        switch value {
        case .string(let text):
            writer.key("stringValue")
            writer.string(text)
        case .bool(let flag):
            writer.key("boolValue")
            writer.bool(flag)
        case .int(let number):
            writer.key("intValue")
            writer.string(String(number))
        case .double(let number):
            writer.key("doubleValue")
            if number.isFinite {
                writer.double(number)
            } else {
                // The protobuf JSON mapping spells non-finite doubles as strings.
                writer.string(number.isNaN ? "NaN" : (number > 0 ? "Infinity" : "-Infinity"))
            }
        case .bytes(let bytes):
            writer.key("bytesValue")
            writer.string(Data(bytes).base64EncodedString())
        case .array(let values):
            writer.key("arrayValue")
            writer.beginObject()
            writer.key("values")
            writer.beginArray()
            for element in values {
                writeAnyValue(element, to: &writer)
            }
            writer.endArray()
            writer.endObject()
        case .map(let members):
            writer.key("kvlistValue")
            writer.beginObject()
            writer.key("values")
            writeAttributes(members, to: &writer)
            writer.endObject()
        }
        writer.endObject()
    }
}
