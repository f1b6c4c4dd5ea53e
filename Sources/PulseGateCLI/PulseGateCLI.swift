// PulseGateCLI
