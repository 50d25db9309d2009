import MarqueeCore
import MarqueeEmulator
import Testing

extension EmulatorTests {
    @Suite("Profiles: the answers Apple's servers send (observed, the default) or Apple's text (documented)")
    struct ProfileTests {
        @Test("An emulator answers as Apple's servers were seen answering unless told otherwise")
        func observedIsTheDefault() {
            let configuration = APNSEmulatorConfiguration()
            #expect(configuration.profile == .observed)
            #expect(configuration.featureNotEnabledReason == .broadcastFeatureNotEnabled)
            #expect(configuration.unknownChannelDeletionReason == .badPath)
            #expect(configuration.unknownChannelDeletionReason.status == 404)
            #expect(configuration.neverCreatedChannelBroadcastReason == .badChannelId)
            #expect(configuration.broadcastRequiresExpiration)
        }

        @Test("The documented profile answers as Apple's documentation says")
        func documented() {
            let configuration = APNSEmulatorConfiguration(profile: .documented)
            #expect(configuration.profile == .documented)
            #expect(configuration.featureNotEnabledReason == .featureNotEnabled)
            #expect(configuration.unknownChannelDeletionReason == .channelNotRegistered)
            #expect(configuration.neverCreatedChannelBroadcastReason == .channelNotRegistered)
            #expect(!configuration.broadcastRequiresExpiration)
        }

        @Test(
            "What both profiles share: 16-byte channel IDs, no broadcast throttling",
            arguments: APNSEmulatorProfile.allCases
        )
        func shared(profile: APNSEmulatorProfile) {
            let configuration = APNSEmulatorConfiguration(profile: profile)
            #expect(configuration.channelIDByteCount == 16)
            #expect(configuration.broadcastThrottle == nil)
        }

        @Test("Profiles are named as `marquee emulator --profile` takes them")
        func names() {
            #expect(APNSEmulatorProfile(rawValue: "observed") == .observed)
            #expect(APNSEmulatorProfile(rawValue: "documented") == .documented)
            #expect(APNSEmulatorProfile.allCases.count == 2)
        }

        @Test("A throttle of about one broadcast per second per channel, Apple's description, is the default shape")
        func throttleDefaults() {
            let throttle = APNSEmulatorBroadcastThrottle()
            #expect(throttle.interval == 1)
            #expect(throttle.burst == 1)
            #expect(
                APNSEmulatorBroadcastThrottle(interval: -1, burst: 0)
                    == APNSEmulatorBroadcastThrottle(interval: 0, burst: 1)
            )
        }
    }
}
