// MarqueeEmulator: a local APNs for tests, demos and app developers. See DEVELOPERS.md.
