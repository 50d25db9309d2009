import MarqueeAPI
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine

extension APIHandler {
    /// The emulator `/v1/emulator` reads, or 404 when APNs is Apple's (or an unnamed emulator's).
    private func requiredEmulator() throws -> any EmulatorInspection {
        guard let emulator else {
            throw Problem(
                .notFound,
                detail:
                    """
                    APNs is not an emulator here: /v1/emulator answers with the in-process emulator, or one named \
                    by emulator.inspectionURL
                    """
            )
        }
        return emulator
    }

    /// `POST /v1/emulator/devices`: virtual iPhones with the key's app, and their push-to-start tokens.
    func createEmulatorDevices(
        _ input: Operations.CreateEmulatorDevices.Input
    ) async throws -> Operations.CreateEmulatorDevices.Output {
        let emulator = try requiredEmulator()
        let app = try await authorizedApp(.app)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        var errors: [Problem.FieldProblem] = []
        let count = body.count ?? 1
        if !(1...1000).contains(count) { errors.append(.init(pointer: "/count", detail: "must be from 1 to 1000")) }
        let version = IOSVersion(string: body.iosVersion ?? "18.0")
        if version.map({ $0 < IOSVersion.pushToStart }) ?? true {
            errors.append(
                .init(
                    pointer: "/iosVersion",
                    detail: "must be an iOS version from 17.2 (push-to-start needs it), e.g. 18.0"
                )
            )
        }
        if !AttributesTypeRule.isValid(body.attributesType) {
            errors.append(
                .init(pointer: "/attributesType", detail: "must be an ActivityKit attributes type's Swift name")
            )
        }
        let environment = body.environment.domain
        if !app.environments.contains(environment) {
            errors.append(.init(pointer: "/environment", detail: "the app has no \(environment.rawValue) environment"))
        }
        guard errors.isEmpty, let version else {
            throw Problem(
                .invalidRequest,
                detail: errors.map { "\($0.pointer ?? ""): \($0.detail)" }.joined(separator: "; "),
                errors: errors
            )
        }
        var devices: [Components.Schemas.EmulatorDevice] = []
        for _ in 0..<count {
            let device = try await emulator.registerDevice(
                environment: environment,
                bundleID: app.bundleID,
                iOSVersion: version,
                pushToStartAttributesTypes: [body.attributesType]
            )
            guard let token = device.pushToStartTokens[body.attributesType] else { continue }
            devices.append(
                .init(
                    deviceID: device.id,
                    environment: body.environment,
                    iosVersion: device.iOSVersion.description,
                    pushToStartToken: token
                )
            )
        }
        return .created(.init(body: .json(.init(devices: devices))))
    }

    /// `GET /v1/emulator/lock-screens`: each device's Lock Screen, drawn as `marquee demo` draws it.
    func listEmulatorLockScreens(
        _ input: Operations.ListEmulatorLockScreens.Input
    ) async throws -> Operations.ListEmulatorLockScreens.Output {
        let emulator = try requiredEmulator()
        guard let key = try scope.apiKey else { throw Problem(.unauthorized) }
        let bundleID: String? = key.appID == nil ? nil : try await authorizedApp(.app).bundleID
        let limit = try Cursor.limit(input.query.limit)
        let environment = input.query.environment.domain
        let devices = try await emulator.devices(in: environment).filter { bundleID == nil || $0.bundleID == bundleID }
        var activities: [String: EmulatedActivity] = [:]
        for activity in try await emulator.activities(in: environment) { activities[activity.id] = activity }
        let screens = devices.prefix(limit).map { device -> Components.Schemas.EmulatorLockScreen in
            let activity = device.activityIDs.reversed().lazy.compactMap { activities[$0] }.first
            let screen = activity.map { LockScreen(activity: $0, device: device) }
            return .init(
                deviceID: device.id,
                bundleID: device.bundleID,
                iosVersion: device.iOSVersion.description,
                online: device.isOnline,
                activityID: activity?.id,
                status: screen.flatMap { Components.Schemas.EmulatorLockScreen.StatusPayload(rawValue: $0.status) },
                competition: screen?.competition,
                homeTeam: screen?.homeTeam,
                awayTeam: screen?.awayTeam,
                score: screen?.score,
                clock: screen?.clock,
                lastEvent: screen?.lastEvent,
                alert: activity?.lastAlert.flatMap(Components.Schemas.EmulatorLockScreen.AlertPayload.init(shown:)),
                lines: screen?.lines
            )
        }
        return .ok(
            .init(body: .json(.init(environment: input.query.environment, total: devices.count, devices: screens)))
        )
    }
}

extension Components.Schemas.EmulatorLockScreen.AlertPayload {
    /// An `aps.alert` as the device shows it: a plain text as it is, a localized one by its key;
    /// nil for anything that is not an alert object.
    init?(shown alert: JSONValue) {
        guard case .object(let object) = alert else { return nil }
        func shown(_ part: JSONValue?) -> String? {
            switch part {
            case .string(let text): text
            case .object(let localized): localized["loc-key"]?.text
            default: nil
            }
        }
        self.init(title: shown(object["title"]), body: shown(object["body"]))
    }
}
