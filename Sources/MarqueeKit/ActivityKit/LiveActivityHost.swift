#if canImport(ActivityKit)
import ActivityKit

/// ActivityKit as MarqueeKit's activity host: the activities of one attributes type.
@available(iOS 17.2, *)
public struct LiveActivityHost<Attributes: MarqueeActivityAttributes>: ActivityHost {
    public init() {}

    public func currentActivities() async -> [ObservedActivity] {
        Activity<Attributes>.activities.compactMap(ObservedActivity.init(activity:))
    }

    /// Ends them without a final content and removes them from the Lock Screen at once: a second
    /// activity of an event must not stay in view.
    public func end(activityIDs: [String]) async {
        let ending = Set(activityIDs)
        for activity in Activity<Attributes>.activities where ending.contains(activity.id) {
            await activity.end(nil, dismissalPolicy: .immediate)
        }
    }
}

@available(iOS 17.2, *)
extension ObservedActivity {
    /// What the census needs of an ActivityKit activity; nil for one not on screen yet (iOS 26's
    /// scheduled activities are `pending` until their start).
    init?<Attributes: MarqueeActivityAttributes>(activity: Activity<Attributes>) {
        let state: State
        switch activity.activityState {
        case .active: state = .active
        case .stale: state = .stale
        case .ended: state = .ended
        case .dismissed: state = .dismissed
        @unknown default: return nil
        }
        self.init(id: activity.id, eventKey: activity.attributes.marqueeEventKey, state: state)
    }
}
#endif
