import Foundation
import MarqueeCore
import Testing

@testable import MarqueeEngine

/// What a resend of a job's uncertain starts is made of, without I/O: its job's ID and arguments.
@Suite("Resending uncertain starts")
struct ResendUncertainTests {
    @Test("a job has one resend: its ID is derived from the job's, the same every time, another job's for another job")
    func resendID() {
        let job = JobID()
        let resend = JobID(resendingUncertainOf: job)
        #expect(resend == JobID(resendingUncertainOf: job))
        #expect(resend != JobID(resendingUncertainOf: JobID()))
        #expect(resend != job)
        // A UUID of version 8 (made by the application), RFC 9562's variant.
        #expect(resend.uuid.uuid.6 >> 4 == 8)
        #expect(resend.uuid.uuid.8 >> 6 == 0b10)
    }

    @Test(
        """
        a resend's arguments keep the job whose uncertain tokens it sends, and its audience is those tokens less \
        the start ledger's
        """
    )
    func arguments() throws {
        let original = JobID()
        let arguments = StartJobArguments(
            eventID: EventID(),
            environment: .sandbox,
            attributesType: "MatchAttributes",
            attributes: ["homeTeam": "Arsenal"],
            contentState: ["homeScore": 0],
            alert: ["title": "Kick-off"],
            audience: StartAudience(),
            inputPushToken: false,
            apnsChannelID: nil,
            channelID: nil,
            timestamp: 1_767_225_600,
            uncertainOf: original
        )
        let read = try StartJobArguments(arguments.jsonValue)
        #expect(read == arguments)
        let query = read.audienceQuery(appID: AppID(), jobID: JobID(), afterEarlierRuns: false)
        #expect(query.uncertainIn == original)
        #expect(query.excludingStartsOf == arguments.eventID)
        // A start of its own has no such filter.
        var plain = arguments
        plain.uncertainOf = nil
        #expect(
            try StartJobArguments(plain.jsonValue).audienceQuery(
                appID: AppID(),
                jobID: JobID(),
                afterEarlierRuns: false
            ).uncertainIn == nil
        )
    }
}
