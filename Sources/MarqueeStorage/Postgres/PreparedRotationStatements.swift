import Foundation
import MarqueeCore
import PostgresNIO

/// The statements of a registration that rotates a device's token (`registerRotatingDevices`),
/// prepared: a tenth of the match-day soak's registrations rotate, and PostgreSQL planned each of
/// their statements at every call (2 s of planning a minute for 6,000 rotations, the find alone
/// 0.23 ms of planning against 0.05 ms of running).

/// `PostgresStore.holdApp`.
enum AppHoldShape: PreparedQueryShape {
    static let name = "marquee_hold_app"
    static let sql = PostgresStore.holdApp(AppID()).sql
}

/// `PostgresStore.rotations`.
enum RotationsShape: PreparedQueryShape {
    static let name = "marquee_find_rotations"
    static let sql = PostgresStore.rotations(appID: AppID(), []).sql
}

/// `PostgresStore.lockTokenRows`.
enum TokenRowLockShape: PreparedQueryShape {
    static let name = "marquee_lock_token_rows"
    static let sql = PostgresStore.lockTokenRows(device: 0, token: nil).sql
}

/// `PostgresStore.moveDeviceRow`.
enum DeviceRowMoveShape: PreparedQueryShape {
    static let name = "marquee_move_device_row"
    static let sql = PostgresStore.moveDeviceRow(0, to: "", at: Date(timeIntervalSince1970: 0)).sql
}
