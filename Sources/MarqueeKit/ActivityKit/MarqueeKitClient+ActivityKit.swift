#if canImport(ActivityKit)
import ActivityKit
import Foundation

@available(iOS 17.2, *)
extension MarqueeKitClient {
    /// A client over ActivityKit's activities of `Attributes`, its state kept in Application Support.
    public init<Attributes: MarqueeActivityAttributes>(
        configuration: MarqueeKitConfiguration,
        attributes: Attributes.Type,
        transport: (any MarqueeTransport)? = nil
    ) {
        var configuration = configuration
        if configuration.frequentPushesEnabled == nil {
            configuration.frequentPushesEnabled = ActivityAuthorizationInfo().frequentPushesEnabled
        }
        self.init(
            configuration: configuration,
            transport: transport,
            activities: LiveActivityHost<Attributes>(),
            stateStore: try? FileStateStore.applicationSupport()
        )
    }

    /// Follows ActivityKit for `Attributes` until the returned task is cancelled: registers each
    /// push-to-start token and each activity's update token as they come and rotate, and
    /// reconciles whenever an activity begins or changes state (a second activity of an event is
    /// ended before its token is registered). Call it once, at launch; keep the task.
    public nonisolated func followActivities<Attributes: MarqueeActivityAttributes>(
        of attributes: Attributes.Type
    ) -> Task<Void, Never> {
        Task {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await token in Activity<Attributes>.pushToStartTokenUpdates {
                        _ = try? await self.register(pushToStartToken: token)
                    }
                }
                _ = await self.reconcile()
                for activity in Activity<Attributes>.activities {
                    let activityID = activity.id
                    group.addTask { await self.follow(activityID: activityID, of: Attributes.self) }
                }
                for await activity in Activity<Attributes>.activityUpdates {
                    let activityID = activity.id
                    _ = await self.reconcile()
                    group.addTask { await self.follow(activityID: activityID, of: Attributes.self) }
                }
            }
        }
    }

    /// One activity's update tokens and state changes, until it ends. Only its ID crosses into
    /// each task: the activity is looked up in ActivityKit's list there.
    private nonisolated func follow<Attributes: MarqueeActivityAttributes>(
        activityID: String,
        of attributes: Attributes.Type
    ) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                guard let activity = Self.activity(activityID, of: Attributes.self) else { return }
                let eventKey = activity.attributes.marqueeEventKey
                for await token in activity.pushTokenUpdates {
                    _ = try? await self.register(updateToken: token, activityID: activityID, eventKey: eventKey)
                }
            }
            group.addTask {
                guard let activity = Self.activity(activityID, of: Attributes.self) else { return }
                for await _ in activity.activityStateUpdates {
                    _ = await self.reconcile()
                }
            }
        }
    }

    private static func activity<Attributes: MarqueeActivityAttributes>(
        _ activityID: String,
        of attributes: Attributes.Type
    ) -> Activity<Attributes>? {
        Activity<Attributes>.activities.first { $0.id == activityID }
    }
}
#endif
