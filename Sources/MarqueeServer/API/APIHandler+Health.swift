import Logging
import MarqueeAPI
import MarqueeCore
import MarqueeEngine

extension APIHandler {
    func getLiveness(_ input: Operations.GetLiveness.Input) async throws -> Operations.GetLiveness.Output {
        .ok(.init(body: .json(.init(status: "ok"))))
    }

    func getReadiness(_ input: Operations.GetReadiness.Input) async throws -> Operations.GetReadiness.Output {
        do {
            try await engine.apps.checkStoreAnswers()
        } catch {
            try scope.logger.warning(
                "readiness check: the store does not answer",
                metadata: ["error": "\(String(reflecting: error))"]
            )
            throw Problem(.storeUnavailable, detail: "the store does not answer", retryAfter: 5)
        }
        return .ok(.init(body: .json(.init(status: "ok"))))
    }
}
