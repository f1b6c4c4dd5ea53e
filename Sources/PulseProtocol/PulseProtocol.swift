// PulseProtocol
