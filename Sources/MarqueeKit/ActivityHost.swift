/// Where the activities are: ActivityKit on a device (`LiveActivityHost`), a model of one in
/// tests and in the emulator. The client reads the list when Marquee's push asks, and ends
/// through it the second activities the census finds.
public protocol ActivityHost: Sendable {
    /// The activities listed now, in the order they began.
    func currentActivities() async -> [ObservedActivity]
    /// Ends these activities at once and removes them from the Lock Screen.
    func end(activityIDs: [String]) async
}
