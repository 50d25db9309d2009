import MarqueeClient

extension Operations.CreateBroadcast.Output {
    /// The broadcast's result, whether APNs accepted it in every environment (200) or in some
    /// (207, each result saying which); any other documented answer is unexpected here (the
    /// middleware already turned error statuses into `MarqueeClientError`s).
    var broadcastResult: Components.Schemas.BroadcastResult {
        get throws {
            switch self {
            case .ok(let ok): try ok.body.json
            case .code207(let partial): try partial.body.json
            case let other: throw UnexpectedOutput(other)
            }
        }
    }
}
