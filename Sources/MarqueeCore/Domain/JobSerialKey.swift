import Foundation

/// The serial keys of jobs that must not run side by side (`Job.serialKey`).
public enum JobSerialKey {
    /// An event's start parts: every start of the event, whoever made it (a producer, a schedule,
    /// the late-join pump, a resend of uncertain tokens), runs after the one before it has
    /// committed what it sent. Migration 0018 writes the same text for the parts it backfills.
    public static func start(of eventID: EventID) -> String {
        "start:" + eventID.uuid.lowercasedText
    }
}
