import PulseKit

/// Lower-case hexadecimal encoding: PulseKit's, under the name the gateway and the uploader have
/// always imported it by.
public typealias Hex = PulseKit.Hex
