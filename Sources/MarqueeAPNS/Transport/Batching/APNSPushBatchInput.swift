/// Where a batch takes its pushes from, one at a time, on the pool's event loop. (`SendableMetatype`:
/// the batch, generic over its input, is captured by closures that hop to the loop.)
protocol APNSPushBatchInput: SendableMetatype {
    /// The next push; `.waiting` when none is at hand yet but more may come (a page source still
    /// fetching), `.end` when there will be no more.
    mutating func next() -> APNSPushBatchInputStep
    /// The batch is done with the input (finished or abandoned): release what it holds and stop any
    /// work that feeds it.
    mutating func close()
}

enum APNSPushBatchInputStep {
    case push(APNSDevicePush)
    case waiting
    case end
}
