// common.proto and resource.proto (opentelemetry-proto v1).

extension MessageSchema {
    /// `opentelemetry.proto.common.v1.AnyValue`: a oneof of scalar, array, key/value list and bytes.
    /// Field 8 (`string_value_strindex`) belongs to the profiles dictionary encoding.
    static let anyValue = MessageSchema(
        "AnyValue",
        [
            FieldSchema(1, "stringValue", .string, .oneof(0)),
            FieldSchema(2, "boolValue", .bool, .oneof(0)),
            FieldSchema(3, "intValue", .int64, .oneof(0)),
            FieldSchema(4, "doubleValue", .double, .oneof(0)),
            FieldSchema(5, "arrayValue", .message(.arrayValue), .oneof(0)),
            FieldSchema(6, "kvlistValue", .message(.keyValueList), .oneof(0)),
            FieldSchema(7, "bytesValue", .bytesBase64, .oneof(0)),
            FieldSchema(8, "stringValueStrindex", .int32, .oneof(0), development: true),
        ])

    /// `opentelemetry.proto.common.v1.ArrayValue`.
    static let arrayValue = MessageSchema(
        "ArrayValue", [FieldSchema(1, "values", .message(.anyValue), .repeated)])

    /// `opentelemetry.proto.common.v1.KeyValueList`.
    static let keyValueList = MessageSchema(
        "KeyValueList", [FieldSchema(1, "values", .message(.keyValue), .repeated)])

    /// `opentelemetry.proto.common.v1.KeyValue`; field 3 (`key_strindex`) belongs to profiles.
    static let keyValue = MessageSchema(
        "KeyValue",
        [
            FieldSchema(1, "key", .string),
            FieldSchema(2, "value", .message(.anyValue), .explicit),
            FieldSchema(3, "keyStrindex", .int32, development: true),
        ])

    /// `opentelemetry.proto.common.v1.InstrumentationScope`.
    static let instrumentationScope = MessageSchema(
        "InstrumentationScope",
        [
            FieldSchema(1, "name", .string),
            FieldSchema(2, "version", .string),
            FieldSchema(3, "attributes", .message(.keyValue), .repeated),
            FieldSchema(4, "droppedAttributesCount", .uint32),
        ])

    /// `opentelemetry.proto.common.v1.EntityRef` (development).
    static let entityRef = MessageSchema(
        "EntityRef",
        [
            FieldSchema(1, "schemaUrl", .string),
            FieldSchema(2, "type", .string),
            FieldSchema(3, "idKeys", .string, .repeated),
            FieldSchema(4, "descriptionKeys", .string, .repeated),
        ])

    /// `opentelemetry.proto.resource.v1.Resource`.
    static let resource = MessageSchema(
        "Resource",
        [
            FieldSchema(1, "attributes", .message(.keyValue), .repeated),
            FieldSchema(2, "droppedAttributesCount", .uint32),
            FieldSchema(3, "entityRefs", .message(.entityRef), .repeated, development: true),
        ])
}
