// PulseJSON
