import NIOCore

extension APNSPushBatch where Input == APNSPageInput {
    /// A page from the pump; see `APNSPageInput.append` for what the future means.
    func receive(_ page: [APNSDevicePush], pool: APNSConnectionPool) -> EventLoopFuture<Bool> {
        let mayFetchMore = input.append(page, eventLoop: pool.eventLoop)
        inputArrived(pool: pool)
        return mayFetchMore
    }

    /// The page source finished or threw: the batch ends once what it gave is answered.
    func sourceEnded(pool: APNSConnectionPool) {
        input.endOfSource()
        inputArrived(pool: pool)
    }

    func adopt(pump task: Task<Void, Never>) {
        input.adopt(pump: task)
    }
}
