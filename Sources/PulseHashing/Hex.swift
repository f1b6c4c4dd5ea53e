package import PulseKit

/// Lower-case hexadecimal encoding: PulseKit's, under the name the gateway and the uploader have
/// always imported it by.
package typealias Hex = PulseKit.Hex
