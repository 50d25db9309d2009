import Crypto
import Foundation
import MarqueeCore

extension JobID {
    /// The ID of the start job a schedule sends in `environment`: the same for every run of the
    /// schedule, so that a run taking over from one that stopped finds the job the first one
    /// enqueued (`StartService.start(app:eventKey:request:jobID:)`) instead of starting again.
    init(startOf schedule: ScheduleID, environment: APNSEnvironment) {
        self.init(derivedFrom: schedule, purpose: "start", environment: environment)
    }

    /// The ID of a job a schedule enqueues for `purpose` in `environment`, the same for every run:
    /// a UUID of version 8 (RFC 9562: made by the application) from a SHA-256 of the three.
    init(derivedFrom schedule: ScheduleID, purpose: String, environment: APNSEnvironment) {
        var hasher = SHA256()
        hasher.update(data: Array("marquee.schedule.\(purpose):".utf8))
        withUnsafeBytes(of: schedule.uuid.uuid) { hasher.update(bufferPointer: $0) }
        hasher.update(data: Array(":\(environment.rawValue)".utf8))
        self.init(version8Of: hasher)
    }

    /// A UUID of version 8 (RFC 9562: made by the application) from the first 16 bytes of a SHA-256.
    init(version8Of hasher: SHA256) {
        var bytes = Array(hasher.finalize().prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let uuid = bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
        self.init(UUID(uuid: uuid))
    }
}
