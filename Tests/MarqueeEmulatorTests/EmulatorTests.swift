import Testing

/// Every emulator suite. They run in parallel: each test starts its own emulator on port 0 and
/// talks to it over its own connections.
@Suite
enum EmulatorTests {}
