import MarqueeCore

extension EmulatorWorld {
    /// Draws the traits of a device of an app the emulator plays and applies those APNs and iOS
    /// see (offline, Live Activities off). Devices of other apps are returned as they are.
    mutating func assignAppTraits(to device: EmulatedDevice, shares: EmulatedAppShares) -> EmulatedDevice {
        guard appMarquees[device.bundleID] != nil else { return device }
        let traits = EmulatedAppTraits.draw(shares, using: &appTraitRandom)
        var updated = device
        updated.appTraits = traits
        if traits.offlineAtRegistration { updated.isOnline = false }
        if traits.liveActivitiesOff { updated.areLiveActivitiesEnabled = false }
        environments[device.environment]?.devices[device.id]?.device = updated
        return updated
    }

    /// The app model's event for a push the device got now, when the device's app is played and
    /// can report (a never-reporting app notices nothing worth handing over).
    func appEvent(for target: TokenTarget, payload: [UInt8]?, environment: APNSEnvironment) -> AppModelEvent? {
        let kind: AppModelEvent.Kind
        switch target {
        case .device: kind = .deviceTokenPush(payload: payload ?? [])
        case .pushToStart: kind = .started(payload: payload ?? [])
        case .update: kind = .updated
        }
        return appEvent(kind, deviceID: target.deviceID, environment: environment)
    }

    /// The app model's event for a channel broadcast that ended one of the device's activities.
    func appEventForEndedActivity(deviceID: String, environment: APNSEnvironment) -> AppModelEvent? {
        appEvent(.updated, deviceID: deviceID, environment: environment)
    }

    private func appEvent(_ kind: AppModelEvent.Kind, deviceID: String, environment: APNSEnvironment) -> AppModelEvent?
    {
        guard let device = environments[environment]?.devices[deviceID]?.device,
            device.isOnline, device.isAppInstalled,
            let traits = device.appTraits, !traits.neverReports,
            appMarquees[device.bundleID] != nil
        else { return nil }
        return AppModelEvent(environment: environment, deviceID: device.id, kind: kind)
    }
}
