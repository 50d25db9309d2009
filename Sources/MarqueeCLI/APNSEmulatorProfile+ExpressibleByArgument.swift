import ArgumentParser
import MarqueeEmulator

/// `--profile observed` and `--profile documented`: the profiles by their names.
extension APNSEmulatorProfile: ExpressibleByArgument {}
