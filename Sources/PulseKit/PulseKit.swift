// PulseKit: the one place for what every component needs and must not re-implement —
// time (clocks with an injectable sleep), retries (one backoff), randomness, the module error
// shape, civil time / RFC 3339 and the command-line flag parser. It depends on nothing but the
// standard library and Foundation, so every module (including the library products) may import it.
