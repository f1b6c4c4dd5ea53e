// Tests of the PulseKit shared kit live in one subfolder per concept.
import PulseKit
